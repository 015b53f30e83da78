import { lexicographicSortSchema } from 'graphql'
import { builder } from './builder.js'
import './common.js'
import './messaging-groups.js'
import './messaging-contacts.js'
import './sms.js'
import './webhooks.js'
import './subscriptions.js'
import './channel.js'
import './channel-admin.js'

export const schema = lexicographicSortSchema(builder.toSchema())
