// The account's audit log (docs/console.md, "Audit log"): read-only here. Entries are written by
// the domain functions that make the changes (src/audit/record-audit.ts); no operation writes,
// changes or removes one.
import { builder } from '../builder.js'
import { prismaConnection } from '../connections.js'
import type { KeysetOrder } from '../keyset.js'

const AuditActorKind = builder.enumType('AuditActorKind', {
  description: 'What made a change.',
  values: {
    API_KEY: { value: 'api_key', description: 'An API key (actorId is its id, actorLabel its prefix).' },
    CONSOLE_SESSION: { value: 'console_session', description: 'An account console session (actorId is its id).' },
    OPERATOR: { value: 'operator', description: "The service's operator, through the command line." },
  },
})

const AuditEventRef = builder.prismaObject('AuditEvent', {
  description: 'One entry of the audit log: who changed what, when, and from which address.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The entry id.' }),
    at: t.expose('at', { type: 'DateTime', description: 'When the change was made.' }),
    actorKind: t.field({
      type: AuditActorKind,
      select: { actorKind: true },
      description: 'What made it.',
      resolve: (e) => e.actorKind as 'api_key' | 'console_session' | 'operator',
    }),
    actorId: t.exposeString('actorId', { nullable: true, description: "The key's or console session's id; null for the operator." }),
    actorLabel: t.exposeString('actorLabel', { description: 'How the actor is shown: a key prefix, "console session", "operator (CLI)".' }),
    action: t.exposeString('action', { description: 'What was done, e.g. apikey.create, webhook.rotate_secret, console.sign_in.' }),
    target: t.exposeString('target', {
      nullable: true,
      description: "What it was done to (a key's prefix, a URL); null when the action says it all.",
    }),
    details: t.exposeString('details', { nullable: true, description: 'More about it, as a JSON object text; null when nothing more.' }),
    address: t.exposeString('address', { nullable: true, description: "The client's address; null when unknown (the command line)." }),
  }),
})

/** Newest first; ids follow the clock (recordAudit), the id breaks ties of one instant. */
const AUDIT_ORDER: KeysetOrder = {
  name: 'audit-log',
  columns: [
    { field: 'at', direction: 'desc', type: 'date' },
    { field: 'id', direction: 'desc', type: 'string' },
  ],
}

builder.queryField('auditEvents', (t) =>
  t.connection(
    {
      scope: 'admin',
      type: AuditEventRef,
      description: "The account's audit log, newest first, as a Relay connection. Kept AUDIT_RETENTION_DAYS days (default 365).",
      args: { action: t.arg.string({ description: 'Only entries of this action (e.g. apikey.revoke).' }) },
      resolve: async (_root, { action, ...args }, ctx, info) => {
        const where = { accountId: (await ctx.account()).id, ...(action ? { action } : {}) }
        return prismaConnection(ctx, info, args, {
          typeName: 'AuditEvent',
          order: AUDIT_ORDER,
          where,
          findMany: (query) => ctx.deps.db.auditEvent.findMany(query),
          findFirst: (query) => ctx.deps.db.auditEvent.findFirst(query),
          totalCount: () => ctx.deps.db.auditEvent.count({ where }),
        })
      },
    },
    { name: 'AuditEventConnection', description: 'Audit log entries, newest first (then by id, descending).' },
    { name: 'AuditEventEdge', description: 'An audit log entry and its cursor.' },
  ),
)
