// Global ids (Relay): base64 of `<GraphQL type>:<database id>`, the Pothos Relay plugin's default
// encoding. Arguments that name a Contact, Group, SentMessage, Channel or Program take the database
// id (uuid, program number, channel slug) as before, or the global id of that type.
import { AppError } from '../core/errors.js'
import { isStorableText } from '../messaging/input-rules.js'

/** The types that implement Node. */
export const NODE_TYPES = ['Contact', 'Group', 'SentMessage', 'Channel', 'Program'] as const
export type NodeType = (typeof NODE_TYPES)[number]
const NODE_TYPE_SET: ReadonlySet<string> = new Set(NODE_TYPES)

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const TYPENAME = /^[A-Z_a-z]\w*$/

export const encodeNodeId = (typename: NodeType, id: string | number) => Buffer.from(`${typename}:${id}`, 'utf8').toString('base64')

/**
 * The type and database id of a global id, or null when `value` is not one. Only the canonical
 * encoding counts (the one `encodeNodeId` writes), so no uuid, slug or number is ever mistaken for
 * a global id: those hold `-` or are not canonical base64 of `Type:id`.
 */
export function parseNodeId(value: string): { typename: string; id: string } | null {
  if (value.length === 0 || value.length > 400 || !BASE64.test(value)) return null
  const text = Buffer.from(value, 'base64').toString('utf8')
  const colon = text.indexOf(':')
  if (colon < 1) return null
  const typename = text.slice(0, colon)
  const id = text.slice(colon + 1)
  if (!TYPENAME.test(typename) || id === '' || !isStorableText(id)) return null
  if (Buffer.from(text, 'utf8').toString('base64') !== value) return null
  return { typename, id }
}

/** For `node(id:)` / `nodes(ids:)`: what is not a global id at all is the client's mistake. */
export function decodeNodeId(value: string): { typename: string; id: string } {
  const decoded = parseNodeId(value)
  if (!decoded) throw new AppError('BAD_REQUEST', `${value.length > 60 ? `${value.slice(0, 60)}…` : value} is not a global id`)
  return decoded
}

/** Whether `node` can name an object: a Node type and an id of the shape that type's ids have. */
export function isNodeTarget({ typename, id }: { typename: string; id: unknown }): boolean {
  if (!NODE_TYPE_SET.has(typename)) return false
  const text = String(id)
  if (typename === 'Program') return /^\d{1,10}$/.test(text) && Number(text) <= 2_147_483_647
  return text.length <= 200 && isStorableText(text)
}

/**
 * The database id an argument names: the id inside a global id of `type`, else the value as given
 * (a uuid, a slug, a program number). A global id of another Node type is kept whole, so it names
 * nothing and the field answers as for any unknown id (NOT_FOUND, or 422 for a list of group ids).
 */
export function localId(value: string | number, type: NodeType): string {
  const text = String(value)
  const decoded = parseNodeId(text)
  return decoded && decoded.typename === type ? decoded.id : text
}
