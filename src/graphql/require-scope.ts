import { AppError } from '../core/errors.js'
import type { Scope } from '../auth/scopes.js'
import type { Context } from './context.js'

/**
 * The request's account, when its key holds `scope` (a console session holds every scope).
 * UNAUTHENTICATED without credentials; FORBIDDEN, naming the scope, for a key without it.
 */
export async function requireScope(ctx: Context, scope: Scope) {
  const account = await ctx.account()
  if (!account.scopes.includes(scope)) {
    throw new AppError('FORBIDDEN', `This API key lacks the scope "${scope}"`, [
      { field: 'scope', message: `needs the scope ${scope}; the key has ${account.scopes.join(', ') || 'none'}` },
    ])
  }
  return account
}
