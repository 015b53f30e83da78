import type { Context } from './context.js'
import { requireScope } from './require-scope.js'

/**
 * The unique filter of an account's row by id, for Relay node lookups (and Pothos' fallback
 * reads) of account types: with the account in it, another account's id finds nothing, exactly
 * like a missing one. Needs the request's API key (UNAUTHENTICATED without one) with the scope
 * `read` (FORBIDDEN without it): `node(id:)` is public for channels, not a way around scopes.
 */
export async function accountScoped(id: string, ctx: Context) {
  return { id, accountId: (await requireScope(ctx, 'read')).id }
}
