import { lexicographicSortSchema } from 'graphql'
import { builder } from './builder.js'
import './common.js'
import './messaging-groups.js'
import './messaging-contacts.js'

export const schema = lexicographicSortSchema(builder.toSchema())
