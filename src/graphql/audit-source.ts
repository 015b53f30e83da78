import type { Context } from './context.js'
import type { AuditSource } from '../auth/api-keys.js'
import { consoleActor } from '../console/sessions.js'

/**
 * Who makes this request and from where, for recordAudit (src/audit/record-audit.ts): its API key
 * (prefix) or its console session, the client's address, and the request clock's time. Needs
 * credentials (UNAUTHENTICATED).
 */
export async function auditSource(ctx: Context): Promise<AuditSource & { accountId: string; at: Date }> {
  const account = await ctx.account()
  const actor = ctx.consoleSessionId
    ? consoleActor(ctx.consoleSessionId)
    : { kind: 'api_key' as const, id: account.keyId, label: account.keyPrefix }
  return { accountId: account.id, actor, address: ctx.clientAddress, at: ctx.deps.clock.now() }
}
