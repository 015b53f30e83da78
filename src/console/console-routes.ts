// The account console's pages (docs/console.md): /console (the app, or how to sign in),
// /console/app.js (the Preact app, bundled from console/ by esbuild on first use) and
// /console/sign-in (a link's "Sign in" button, and the POST that spends the link and sets the
// session cookie). Everything else the console does goes through /graphql.
import type { Deps } from '../deps.js'
import { AppError, databaseFault } from '../core/errors.js'
import { escapeHtml } from '../web/html.js'
import { FAVICON_LINK } from '../web/favicon.js'
import { readBodyBytes } from '../http/read-body.js'
import { clientKey, createRateLimiter } from '../http/rate-limit.js'
import { consoleBundle } from './console-bundle.js'
import { checkConsoleLink, consoleSessionOf, cookieValue, csrfTokenOf, redeemConsoleLink, sessionGate, SignInRefused } from './sessions.js'

/** Sign-in attempts (opening a link, pressing its button) per client address: a burst of 10, then one every 6 s. */
const SIGN_IN_RATE = { perSecond: 1 / 6, burst: 10 }

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Frame-Options': 'DENY',
  // Not no-referrer: with it browsers send `Origin: null` on the sign-in form's POST.
  'Referrer-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
}

const STYLE = `
      :root { color-scheme: light; --fg: #1f2328; --muted: #57606a; --line: #d0d7de; --accent: #0b5cad; --bad: #a40e26; --ok: #116329; }
      * { box-sizing: border-box; }
      body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 0 auto; padding: 1rem; color: var(--fg); }
      h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid var(--line); }
      a { color: var(--accent); }
      code, .mono { font-family: ui-monospace, monospace; background: #f6f8fa; padding: 0.1em 0.3em; border-radius: 4px; overflow-wrap: anywhere; }
      button { font: inherit; max-width: 100%; overflow-wrap: break-word; padding: 0.4rem 0.9rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 6px; cursor: pointer; }
      button.secondary { background: #fff; color: var(--accent); }
      button.danger { background: var(--bad); border-color: var(--bad); }
      button:focus-visible, input:focus-visible, select:focus-visible, a:focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
      input, select { font: inherit; padding: 0.35rem 0.5rem; border: 1px solid #6e7781; border-radius: 6px; max-width: 100%; }
      label { display: block; font-weight: 600; margin: 0.5rem 0 0.2rem; }
      table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
      .error { color: var(--bad); } .ok { color: var(--ok); } .muted { color: var(--muted); }
      .row { display: flex; gap: 0.5rem; flex-wrap: wrap; align-items: end; }
      .scroll { overflow-x: auto; }
      pre { overflow-x: auto; max-width: 100%; white-space: pre-wrap; overflow-wrap: anywhere; }
      nav ul { list-style: none; padding: 0; margin: 0; display: flex; gap: 0.25rem 1rem; flex-wrap: wrap; }
      .skip { position: absolute; left: -100vw; top: 0.5rem; background: #fff; padding: 0.4rem 0.8rem; border: 2px solid var(--accent); border-radius: 6px; z-index: 1; }
      .skip:focus { left: 0.5rem; }
      .shell { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; align-items: center; border-bottom: 2px solid var(--line); padding-bottom: 0.5rem; }
      .shell h1 { margin: 0; flex: 1 1 100%; }
      .shell .sign-out { margin-left: auto; align-items: center; }
      main:focus { outline: none; }
      .confirm { border: 1px solid var(--bad); border-radius: 6px; padding: 0.5rem 0.75rem; margin: 0.5rem 0; }
      .confirm p { margin: 0 0 0.5rem; }
      .panel { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.75rem; margin: 0.5rem 0; }
      .panel h4 { margin: 0 0 0.5rem; overflow-wrap: anywhere; }
      /* Under 40rem a table's rows are cards: one cell under the other, each headed by its column, the actions in reach. */
      @media (max-width: 40rem) {
        body { padding: 0.75rem; }
        .cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
        .cards, .cards tbody, .cards tr, .cards td { display: block; width: 100%; }
        .cards tr { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 0.75rem; padding: 0.25rem 0.5rem; }
        .cards td { border: 0; padding: 0.25rem 0; overflow-wrap: anywhere; }
        .cards td[data-label]::before { content: attr(data-label); display: block; font-size: 0.8rem; font-weight: 600; color: var(--muted); }
        .cards td:empty { display: none; }
      }`

function page(title: string, body: string, status = 200, headers: Record<string, string> = {}, head = ''): Response {
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    ${FAVICON_LINK}
    <style>${STYLE}
    </style>${head}
  </head>
  <body>
${body}
  </body>
</html>
`
  return new Response(html, { status, headers: { 'Content-Type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, ...headers } })
}

const message = (title: string, text: string, status: number, headers: Record<string, string> = {}) =>
  page(title, `    <main>\n      <h1>${escapeHtml(title)}</h1>\n      <p>${text}</p>\n    </main>`, status, headers)

const HOW_TO_SIGN_IN =
  'Open a sign-in link to use the console. The operator makes one with <code>npm run cli -- console:link --account &lt;uuid&gt;</code>; an API client with the <code>createConsoleLink</code> mutation. A link works once, for 15 minutes.'

/** /console and what is under it. */
export const isConsolePath = (path: string) => path === '/console' || path.startsWith('/console/')

export function createConsoleRoutes(deps: Pick<Deps, 'db' | 'clock' | 'env' | 'logger'>) {
  const { env } = deps
  const { cookieName, isOwnOrigin } = sessionGate(env.PUBLIC_BASE_URL)
  const secure = env.PUBLIC_BASE_URL.startsWith('https:')
  const limiter = createRateLimiter(SIGN_IN_RATE)
  const cookie = (value: string, maxAgeSeconds: number) =>
    `${cookieName}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`

  async function app(request: Request): Promise<Response> {
    const token = cookieValue(request.headers.get('cookie'), cookieName)
    const session = token ? await consoleSessionOf(deps, token) : null
    if (!session || !token) {
      // A stale cookie (expired, signed out) is cleared.
      return message('Account console', HOW_TO_SIGN_IN, 401, token ? { 'Set-Cookie': cookie('', 0) } : {})
    }
    return page(
      `Account console: ${session.account.name}`,
      `    <div id="app"><p>Loading the console…</p></div>
    <noscript><p>The account console needs JavaScript.</p></noscript>`,
      200,
      {},
      `
    <meta name="csrf-token" content="${csrfTokenOf(token)}" />
    <script type="module" src="/console/app.js"></script>`,
    )
  }

  async function script(request: Request): Promise<Response> {
    const { code, etag } = await consoleBundle()
    const headers = {
      'Content-Type': 'text/javascript; charset=utf-8',
      ETag: etag,
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
    }
    if (request.headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers })
    return new Response(code, { headers })
  }

  async function signIn(request: Request, url: URL, address: string | undefined): Promise<Response> {
    const key = address ? clientKey(address) : null
    const wait = key ? limiter.take(key) : 0
    if (wait > 0)
      return message('Too many sign-in attempts', 'Wait a minute, then open the link again.', 429, {
        'Retry-After': String(Math.ceil(wait)),
      })
    try {
      if (request.method === 'GET' || request.method === 'HEAD') {
        const token = url.searchParams.get('token') ?? ''
        const { accountName } = await checkConsoleLink(deps, token)
        return page(
          'Sign in to the account console',
          `    <main>
      <h1>Sign in to the account console</h1>
      <form method="post" action="/console/sign-in">
        <input type="hidden" name="token" value="${escapeHtml(token)}" />
        <p>This link signs you in to the account <strong>${escapeHtml(accountName)}</strong>, once.</p>
        <button type="submit">Sign in</button>
      </form>
    </main>`,
        )
      }
      if (request.method !== 'POST')
        return message('Method not allowed', 'Open the sign-in link in a browser.', 405, { Allow: 'GET, HEAD, POST' })
      // A sign-in is only ever posted by the page above: another site's form cannot sign a visitor in to an account of its choosing.
      if (!isOwnOrigin(request.headers.get('origin'), [url.origin])) {
        return message('Sign-in refused', 'Sign in from the page the sign-in link opens.', 403)
      }
      const body = new TextDecoder().decode(await readBodyBytes(request, 4096).catch(() => new Uint8Array()))
      const { token, expiresAt } = await redeemConsoleLink(deps, new URLSearchParams(body).get('token') ?? '', address ?? null)
      const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - deps.clock.now().getTime()) / 1000))
      return new Response(null, {
        status: 303,
        headers: { Location: '/console', 'Set-Cookie': cookie(token, maxAge), ...SECURITY_HEADERS },
      })
    } catch (error) {
      if (error instanceof SignInRefused) return message('Sign-in link refused', escapeHtml(error.message), error.status)
      throw error
    }
  }

  /** The console's answer for a request to one of its paths (isConsolePath). */
  return async function handle(request: Request, url: URL, address: string | undefined): Promise<Response> {
    const path = url.pathname
    try {
      if (path === '/console/sign-in') return await signIn(request, url, address)
      if (request.method !== 'GET' && request.method !== 'HEAD')
        return message('Method not allowed', 'The console is read with GET.', 405, { Allow: 'GET, HEAD' })
      if (path === '/console' || path === '/console/') return await app(request)
      if (path === '/console/app.js') return await script(request)
      return message('Not found', 'There is no such console page. <a href="/console">The console</a>.', 404)
    } catch (error) {
      if (databaseFault(error) || (error instanceof AppError && error.code === 'SERVICE_UNAVAILABLE'))
        return message('Try again shortly', 'The database is unavailable.', 503, { 'Retry-After': '1' })
      deps.logger.error({ err: error, path }, 'console page failed')
      return message('Something went wrong', 'The console could not answer; try again.', 500)
    }
  }
}
