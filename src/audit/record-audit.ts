// The account's audit log (docs/console.md, "Audit log"): who changed what, when, from which
// address. Append-only: this room writes rows and the retention purge deletes old ones; nothing
// in the code updates a row, and no API operation writes or removes one directly.
import type { Db, Tx } from '../db/client.js'
import { timeOrderedId } from '../db/time-ordered-id.js'

/** Who made a change: an API key, a console session, or the operator (the CLI). */
export type AuditActor =
  | { kind: 'api_key'; id: string; label: string }
  | { kind: 'console_session'; id: string; label: string }
  | { kind: 'operator'; id: null; label: string }

export const OPERATOR: AuditActor = { kind: 'operator', id: null, label: 'operator (CLI)' }

export interface AuditEntry {
  accountId: string
  actor: AuditActor
  /** `<room>.<verb>`, e.g. `apikey.create`, `webhook.rotate_secret`, `console.sign_in`. */
  action: string
  /** What it was done to (a key's prefix, a URL, an id); null when the action says it all. */
  target?: string | null
  /** More about it (kept as JSON text): never secrets, keys or tokens. */
  details?: Record<string, unknown> | null
  /** The client's address; null when unknown (the CLI, in-process callers). */
  address?: string | null
  /** When; the database's now when not given (pass the request's clock for pinned-time tests). */
  at?: Date
}

/** Longest stored target and details text: an entry records a change, it does not carry payloads. */
const MAX_TARGET = 500
const MAX_DETAILS = 2000

/**
 * Appends one entry. Pass the transaction client when the change runs in one, so the change and its
 * entry commit or roll back together.
 */
export async function recordAudit(db: Db | Tx, entry: AuditEntry): Promise<void> {
  const details = entry.details ? JSON.stringify(entry.details) : null
  // Ids follow the clock: the log's newest-first order and its cursors ride on them (list-audit.ts).
  await db.auditEvent.create({
    data: {
      id: timeOrderedId(entry.at?.getTime()),
      accountId: entry.accountId,
      ...(entry.at ? { at: entry.at } : {}),
      actorKind: entry.actor.kind,
      actorId: entry.actor.id,
      actorLabel: entry.actor.label,
      action: entry.action,
      target: entry.target == null ? null : entry.target.slice(0, MAX_TARGET),
      details: details && details.length > MAX_DETAILS ? JSON.stringify({ truncated: true }) : details,
      address: entry.address ?? null,
    },
  })
}
