// GET /: what this service is and where its faces are, for someone who just opened the port.
import { FAVICON_LINK } from './favicon.js'
import { escapeHtml } from './html.js'

const LINKS: [href: string, label: string, what: string][] = [
  ['/console', 'Account console', 'API keys, the webhook and its delivery log, for account holders (sign in with a link)'],
  ['/graphql', 'GraphiQL', 'the GraphQL API in the browser; put your API key in the Headers tab'],
  ['/graphql/schema.graphql', 'GraphQL schema (SDL)', 'the printed schema as text, for code generators and editors'],
  ['/api/docs', 'REST API reference', 'every REST path under /api, with schemas and examples'],
  ['/api/openapi.json', 'OpenAPI document', 'OpenAPI 3.1, for code generators and API tools'],
  ['/healthz', '/healthz', 'liveness: 200 while the process runs'],
  ['/readyz', '/readyz', 'readiness: 200 when the database is reachable and migrated'],
  ['/metrics', '/metrics', 'Prometheus metrics'],
]

export function homePage(): string {
  const items = LINKS.map(
    ([href, label, what]) => `      <li><a href="${escapeHtml(href)}">${escapeHtml(label)}</a>: ${escapeHtml(what)}</li>`,
  ).join('\n')
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>sms-channel-gateway</title>
    ${FAVICON_LINK}
    <style>
      body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 3rem auto; padding: 0 1rem; color: #1f2328; }
      code { background: #f6f8fa; padding: 0.1em 0.3em; border-radius: 4px; }
      li { margin: 0.4rem 0; }
    </style>
  </head>
  <body>
    <h1>sms-channel-gateway</h1>
    <p>
      Messaging contacts, SMS delivery reports and a public channel broadcast API: a GraphQL API, and a
      REST compatibility layer under <code>/api</code> that answers with the legacy JSON.
    </p>
    <ul>
${items}
    </ul>
    <p>
      Messaging calls need <code>Authorization: Bearer &lt;API key&gt;</code>; create a key with
      <code>npm run cli -- account:create --name "Acme"</code>. The channel API is public.
    </p>
  </body>
</html>
`
}
