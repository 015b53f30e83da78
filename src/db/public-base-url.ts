// The URL people reach the service at, for links printed outside a request (the CLI's console:link).
// A server records the URL it answers at when it starts listening; the CLI, another process that
// usually runs without the server's PORT, prints links under that URL unless it is told otherwise.
import type { Db } from './client.js'
import type { Env } from '../core/env.js'

const SETTING = 'public_base_url'
const LOOPBACK_OR_ANY = new Set(['127.0.0.1', '::1', 'localhost', '0.0.0.0', '::'])

/**
 * The URL a server listening on `port` answers at: PUBLIC_BASE_URL when given, else
 * `http://localhost:<port>` (the port it is bound to, so PORT=0 gives the real one) or, when HOST is
 * a particular address other than loopback, that address.
 */
export function listeningBaseUrl(env: Pick<Env, 'PUBLIC_BASE_URL' | 'PUBLIC_BASE_URL_FROM' | 'HOST'>, port: number): string {
  if (env.PUBLIC_BASE_URL_FROM === 'PUBLIC_BASE_URL') return env.PUBLIC_BASE_URL
  const host = LOOPBACK_OR_ANY.has(env.HOST) ? 'localhost' : env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST
  return `http://${host}:${port}`
}

/** Records the URL a server answers at (the last server started on a database wins). */
export async function recordPublicBaseUrl(db: Db, url: string): Promise<void> {
  await db.serviceSetting.upsert({ where: { name: SETTING }, create: { name: SETTING, value: url }, update: { value: url } })
}

/**
 * The base of links printed outside a request: PUBLIC_BASE_URL, or http://localhost:$PORT, when
 * either is set; otherwise the URL the last server started on this database recorded (with when), and
 * the default http://localhost:4000 when no server has recorded one yet.
 */
export async function linkBaseUrl({ db, env }: { db: Db; env: Env }): Promise<{ url: string; recordedAt: Date | null }> {
  if (env.PUBLIC_BASE_URL_FROM !== 'default') return { url: env.PUBLIC_BASE_URL, recordedAt: null }
  const recorded = await db.serviceSetting.findUnique({ where: { name: SETTING } })
  return recorded ? { url: recorded.value, recordedAt: recorded.updatedAt } : { url: env.PUBLIC_BASE_URL, recordedAt: null }
}
