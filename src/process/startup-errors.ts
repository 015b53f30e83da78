// Turns the failures an operator meets when first starting the service (wrong DATABASE_URL, database
// not created, PostgreSQL down, unwritable data directory, port taken) into one line that names the
// problem and the fix. Anything else is a bug and keeps its stack trace.

interface ErrorLike {
  code?: unknown
  message?: unknown
  path?: unknown
  errors?: unknown
  syscall?: unknown
}

const NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET'])
const FILESYSTEM = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR', 'ENOENT', 'EEXIST', 'ENOSPC'])

interface PostgresTarget {
  where: string
  host: string
  port: string
  database: string
  user: string
}

/** Host, port, database and user of a PostgreSQL URL, never its password. */
function postgresTarget(url: string): PostgresTarget | null {
  try {
    const u = new URL(url)
    const host = u.hostname.replace(/^\[|\]$/g, '') || 'localhost'
    const port = u.port || '5432'
    const user = decodeURIComponent(u.username) || 'postgres'
    const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || user
    return { where: `${host}:${port}`, host, port, database, user }
  } catch {
    return null
  }
}

function codeOf(error: ErrorLike): string | undefined {
  if (typeof error.code === 'string') return error.code
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  if (Array.isArray(error.errors)) return (error.errors as ErrorLike[]).map(codeOf).find(Boolean)
  return undefined
}

const reasons: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOTDIR: 'a parent is not a directory',
  EISDIR: 'it is a directory',
  ENOENT: 'no such directory',
  EEXIST: 'a parent is not a directory',
  ENOSPC: 'no space left on device',
  SQLITE_CANTOPEN: 'cannot open the file',
  SQLITE_READONLY: 'the file is read-only',
  SQLITE_PERM: 'permission denied',
}

/**
 * The one-line description of a start-up failure with its fix, or null when the error is not one
 * an operator can fix in the configuration (the caller then prints it whole).
 */
export function describeStartupError(error: unknown, databaseUrl: string): string | null {
  if (!error || typeof error !== 'object') return null
  const e = error as ErrorLike
  const code = codeOf(e)
  const message = typeof e.message === 'string' ? e.message : ''

  if (code === 'ERR_INVALID_URL') {
    return 'DATABASE_URL is not a valid URL: write it as postgresql://user:password@host:5432/database (percent-encode special characters in the password)'
  }

  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const pg = postgresTarget(databaseUrl)
    if (!pg) return 'DATABASE_URL is not a valid URL: write it as postgresql://user:password@host:5432/database'
    if (code && NETWORK.has(code)) {
      return `cannot reach PostgreSQL at ${pg.where} (${reasons[code]}): start PostgreSQL there or fix the host and port in DATABASE_URL`
    }
    if (code === '3D000') {
      return `database "${pg.database}" does not exist on ${pg.where}: create it with \`createdb -h ${pg.host} -p ${pg.port} -U ${pg.user} ${pg.database}\` or fix the database name in DATABASE_URL`
    }
    if (code === '28P01' || code === '28000') {
      return `PostgreSQL at ${pg.where} refused user "${pg.user}" (${message}): fix the user name and password in DATABASE_URL`
    }
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
      return `PostgreSQL at ${pg.where} refused to start the service (SQLSTATE ${code}: ${message}): check the user's rights on database "${pg.database}"`
    }
    return null
  }

  const file = databaseUrl.replace(/^file:/, '')
  const sqlite = code?.startsWith('SQLITE_') && /CANTOPEN|READONLY|PERM/.test(code)
  if (sqlite || (code && FILESYSTEM.has(code) && typeof e.syscall === 'string')) {
    return `cannot create or open the SQLite database "${file}" (${reasons[code!] ?? code}): point DATABASE_URL at a writable path, e.g. file:./data/gateway.db`
  }
  return null
}

/** For `server.listen` failures. */
export function describeListenError(error: unknown, host: string, port: number): string | null {
  const code = codeOf((error ?? {}) as ErrorLike)
  if (code === 'EADDRINUSE') return `port ${port} on ${host} is already in use: stop the other process or set PORT to a free port`
  if (code === 'EACCES') return `no permission to listen on port ${port} on ${host}: use a port above 1023 or grant the right to bind it`
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine: set HOST to one of its addresses (0.0.0.0 for all)`
  return null
}
