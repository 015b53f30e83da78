import type { Context } from './context.js'

/**
 * The unique filter of an account's row by id, for Relay node lookups (and Pothos' fallback
 * reads) of account types: with the account in it, another account's id finds nothing, exactly
 * like a missing one. Needs the request's API key (UNAUTHENTICATED without one).
 */
export async function accountScoped(id: string, ctx: Context) {
  return { id, accountId: (await ctx.account()).id }
}
