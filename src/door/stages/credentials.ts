import { databaseFault } from '../../core/errors.js'
import { bearerToken } from '../../auth/api-keys.js'
import type { sessionGate } from '../../console/sessions.js'
import type { createCredentialsStage } from '../credentials.js'
import type { Door, Stage } from '../pipeline.js'

/**
 * Who is calling: the Bearer key, or on /graphql the console's session (its cookie with its CSRF
 * token, from the service's own origin). A key not verified lately is verified here (the lookup the
 * request makes anyway; its answer stays in the key cache). In-process callers (tests, tools) have
 * no address: their key is left to the context. A database fault while looking a session up is the 503.
 */
export function credentialsStage(
  { credentials }: ReturnType<typeof createCredentialsStage>,
  consoleGate: ReturnType<typeof sessionGate>,
  unavailable: (door: Door) => Response,
): Stage {
  return async function credentialsOf(door, next) {
    const { request, url } = door
    const token = bearerToken(request.headers.get('authorization'))
    const sessionToken =
      !token && url.pathname === '/graphql'
        ? consoleGate.tokenOf({
            cookieHeader: request.headers.get('cookie'),
            csrfToken: request.headers.get('x-csrf-token'),
            origin: request.headers.get('origin'),
            requestOrigins: [url.origin],
            originRequired: false,
            fetchSite: request.headers.get('sec-fetch-site'),
          })
        : null
    try {
      door.credentials = await credentials(token, sessionToken, door.address.key !== null)
    } catch (error) {
      if (databaseFault(error)) return unavailable(door)
      throw error
    }
    return next(door)
  }
}
