// The account console: a Preact front end of the public GraphQL API (docs/console.md). It holds no
// API key: its requests carry the session cookie (HttpOnly, set by the sign-in link) and the
// session's CSRF token from the page's <meta name="csrf-token">.
import { render, type ComponentChildren } from 'preact'
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { CONSOLE_DOCUMENTS as D } from '../src/console/documents.js'

interface GraphQLError {
  message: string
  extensions?: { code?: string; details?: { field: string; message: string }[] }
}
type Result<T> = { data?: T; errors?: GraphQLError[] }

const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? ''
const headers = { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }

async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<Result<T>> {
  try {
    const response = await fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers,
      body: JSON.stringify({ query, variables }),
    })
    const result = (await response.json()) as Result<T>
    if (result.errors?.some((e) => e.extensions?.code === 'UNAUTHENTICATED')) location.assign('/console')
    return result
  } catch {
    return { errors: [{ message: 'The service did not answer; try again.' }] }
  }
}

/** What went wrong, for an inline error: the details' messages when there are some. */
const problem = (errors?: GraphQLError[]) =>
  errors?.length
    ? errors.map((e) => (e.extensions?.details?.length ? e.extensions.details.map((d) => d.message).join('; ') : e.message)).join('; ')
    : null

const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—')

function ErrorText({ id, text }: { id: string; text: string | null }) {
  return (
    <p id={id} class="error" role="alert" hidden={!text}>
      {text}
    </p>
  )
}

/**
 * A table with its column headings. Under 40rem its rows become stacked cards (CSS in
 * src/console/console-routes.ts), each cell headed by its column's name, so that no action is
 * off screen at phone width; the cells get that name here, once rendered.
 */
function Table({ columns, testId, children }: { columns: string[]; testId?: string; children: ComponentChildren }) {
  const table = useRef<HTMLTableElement>(null)
  useLayoutEffect(() => {
    for (const row of table.current?.tBodies[0]?.rows ?? [])
      for (const [i, cell] of [...row.cells].entries()) cell.dataset.label = columns[i] ?? ''
  })
  return (
    <div class="scroll">
      <table data-testid={testId} class="cards" ref={table}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  )
}

/** A destructive action's second step: what it does, then "Yes, …" or Cancel. */
function Confirm({
  text,
  yes,
  onYes,
  onCancel,
  children,
}: {
  text: string
  yes: string
  onYes: () => void
  onCancel: () => void
  children?: ComponentChildren
}) {
  return (
    <div class="confirm" role="group" aria-label={yes}>
      <p>{text}</p>
      {children}
      <div class="row">
        <button type="button" class="danger" onClick={onYes}>
          {yes}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  )
}

// ---------------------------------------------------------------- account

interface Account {
  name: string
  timezone: string
  creditBalance: string
  pricePerPage: string
}

function AccountSection({ account }: { account: Account | null }) {
  const [id, setId] = useState('')
  const [report, setReport] = useState<Record<string, unknown> | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [groups, setGroups] = useState<
    { uuid: string; name: string; optinCode: string | null; optoutCode: string | null; subscriptionSim: string | null }[]
  >([])
  useEffect(() => {
    void gql<{ groups: { nodes: typeof groups } }>(D.groups).then((r) =>
      setGroups((r.data?.groups.nodes ?? []).filter((g) => g.optinCode || g.optoutCode)),
    )
  }, [])
  async function lookUp(event: Event) {
    event.preventDefault()
    const r = await gql<{ message: Record<string, unknown> | null }>(D.report, { id: id.trim() })
    setReport(r.data?.message ?? null)
    setError(problem(r.errors))
  }
  return (
    <section aria-labelledby="account-heading">
      <h2 id="account-heading">Account</h2>
      {account && (
        <dl>
          <dt>Credit balance</dt>
          <dd data-testid="credit-balance">{account.creditBalance} credits</dd>
          <dt>Price per SMS page</dt>
          <dd>{account.pricePerPage} credits</dd>
          <dt>Time zone of delivery reports</dt>
          <dd>{account.timezone}</dd>
        </dl>
      )}
      <form onSubmit={lookUp} class="row">
        <div>
          <label for="report-id">Delivery report by message id</label>
          <input id="report-id" value={id} onInput={(e) => setId(e.currentTarget.value)} aria-describedby="report-error" required />
        </div>
        <button type="submit">Look up</button>
      </form>
      <ErrorText id="report-error" text={error} />
      {report && (
        <pre class="mono scroll" data-testid="report">
          {JSON.stringify(report, null, 2)}
        </pre>
      )}
      <h3>Groups contacts join and leave by SMS</h3>
      {groups.length ? (
        <Table columns={['Group', 'Join code', 'Leave code', 'Send to']}>
          {groups.map((g) => (
            <tr key={g.uuid}>
              <td>{g.name}</td>
              <td class="mono">{g.optinCode ?? '—'}</td>
              <td class="mono">{g.optoutCode ?? '—'}</td>
              <td class="mono">{g.subscriptionSim ?? '—'}</td>
            </tr>
          ))}
        </Table>
      ) : (
        <p class="muted">No group takes SMS codes.</p>
      )}
    </section>
  )
}

// ---------------------------------------------------------------- API keys

interface ApiKey {
  id: string
  prefix: string
  label: string | null
  scopes: string[]
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
  expiresAt: string | null
}

/** The scopes a new key may get (ApiKeyScope), with what each allows. */
const SCOPE_CHOICES: [string, string][] = [
  ['READ', 'Read contacts, groups, messages and the webhook'],
  ['CONTACTS_WRITE', 'Change contacts and groups'],
  ['SMS_SEND', 'Send SMS'],
  ['SMS_RECEIVE', 'Report SMS received on hosted SIMs'],
  ['WEBHOOKS_MANAGE', 'Manage the webhook'],
  ['CHANNELS_MANAGE', 'Operate channels'],
  ['ADMIN', 'Manage keys, console links and read the audit log'],
]

const scopeName = (value: string) => value.toLowerCase().replace('_', ':')

function KeysSection() {
  const [keys, setKeys] = useState<ApiKey[]>([])
  const [label, setLabel] = useState('')
  const [scopes, setScopes] = useState<string[]>(SCOPE_CHOICES.map(([value]) => value))
  const [expiresInDays, setExpiresInDays] = useState('')
  const [graceHours, setGraceHours] = useState('24')
  const [error, setError] = useState<string | null>(null)
  const [created, setCreated] = useState<string | null>(null)
  const [copied, setCopied] = useState(false)
  const [confirming, setConfirming] = useState<string | null>(null)
  const [rolling, setRolling] = useState<string | null>(null)
  const load = useCallback(async () => {
    const r = await gql<{ apiKeys: ApiKey[] }>(D.apiKeys)
    if (r.data) setKeys(r.data.apiKeys)
  }, [])
  useEffect(() => void load(), [load])
  function shown(key: string) {
    setCreated(key)
    setCopied(false)
  }
  async function create(event: Event) {
    event.preventDefault()
    const days = expiresInDays.trim()
    if (days && !/^[1-9]\d{0,4}$/.test(days)) return setError('Expires in: a whole number of days, or empty for never')
    const expiresAt = days ? new Date(Date.now() + Number(days) * 86_400_000).toISOString() : null
    const r = await gql<{ createApiKey: { key: string } }>(D.createApiKey, { label, scopes, expiresAt })
    setError(problem(r.errors))
    if (r.data) {
      shown(r.data.createApiKey.key)
      setLabel('')
      await load()
    }
  }
  async function revoke(id: string) {
    const r = await gql(D.revokeApiKey, { id })
    setError(problem(r.errors))
    setConfirming(null)
    await load()
  }
  async function roll(id: string) {
    if (!/^\d{1,3}$/.test(graceHours.trim())) return setError('Grace period: a whole number of hours from 0 to 720')
    const r = await gql<{ rollApiKey: { key: string } }>(D.rollApiKey, { id, graceHours: Number(graceHours) })
    setError(problem(r.errors))
    setRolling(null)
    if (r.data) shown(r.data.rollApiKey.key)
    await load()
  }
  async function copy() {
    if (!created) return
    await navigator.clipboard.writeText(created).then(
      () => setCopied(true),
      () => setCopied(false),
    )
  }
  const toggle = (value: string, on: boolean) => setScopes((now) => (on ? [...now, value] : now.filter((s) => s !== value)))
  const expired = (k: ApiKey) => k.expiresAt !== null && new Date(k.expiresAt).getTime() <= Date.now()
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <form onSubmit={create} noValidate>
        <div class="row">
          <div>
            <label for="key-label">Label of a new key</label>
            <input
              id="key-label"
              value={label}
              maxLength={100}
              onInput={(e) => setLabel(e.currentTarget.value)}
              aria-describedby="key-error"
            />
          </div>
          <div>
            <label for="key-expires">Expires in (days; empty: never)</label>
            <input
              id="key-expires"
              inputMode="numeric"
              value={expiresInDays}
              size={6}
              onInput={(e) => setExpiresInDays(e.currentTarget.value)}
              aria-describedby="key-error"
            />
          </div>
        </div>
        <fieldset>
          <legend>What the key may do</legend>
          {SCOPE_CHOICES.map(([value, text]) => (
            <label key={value} style="font-weight: normal; display: block">
              <input type="checkbox" checked={scopes.includes(value)} onChange={(e) => toggle(value, e.currentTarget.checked)} />{' '}
              <code>{scopeName(value)}</code> {text}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create key</button>
      </form>
      <ErrorText id="key-error" text={error} />
      {created && (
        <div role="status">
          <p>
            Your new key, shown this once: <code data-testid="new-key">{created}</code>{' '}
            <button type="button" class="secondary" onClick={copy}>
              Copy
            </button>{' '}
            {copied && <span class="ok">Copied.</span>}
          </p>
        </div>
      )}
      <Table columns={['Key', 'Label', 'Scopes', 'Created', 'Last used', 'Expires', 'Status']}>
        {keys.map((k) => (
          <tr key={k.id} data-prefix={k.prefix}>
            <td class="mono">{k.prefix}…</td>
            <td>{k.label ?? '—'}</td>
            <td>{k.scopes.length === SCOPE_CHOICES.length ? 'all' : k.scopes.map(scopeName).join(', ')}</td>
            <td>{when(k.createdAt)}</td>
            <td>{k.lastUsedAt ? when(k.lastUsedAt) : 'never'}</td>
            <td>{k.expiresAt ? when(k.expiresAt) : 'never'}</td>
            <td>
              {k.revokedAt ? (
                `revoked ${when(k.revokedAt)}`
              ) : expired(k) ? (
                'expired'
              ) : confirming === k.id ? (
                <span class="row">
                  <span>Revoke {k.prefix}? Requests with it will be refused.</span>
                  <button type="button" class="danger" onClick={() => revoke(k.id)}>
                    Yes, revoke {k.prefix}
                  </button>
                  <button type="button" class="secondary" onClick={() => setConfirming(null)}>
                    Cancel
                  </button>
                </span>
              ) : rolling === k.id ? (
                <span class="row">
                  <label for={`grace-${k.id}`}>Old key keeps working (hours)</label>
                  <input
                    id={`grace-${k.id}`}
                    inputMode="numeric"
                    size={4}
                    value={graceHours}
                    onInput={(e) => setGraceHours(e.currentTarget.value)}
                  />
                  <button type="button" onClick={() => roll(k.id)}>
                    Roll {k.prefix}
                  </button>
                  <button type="button" class="secondary" onClick={() => setRolling(null)}>
                    Cancel
                  </button>
                </span>
              ) : (
                <span class="row">
                  <button type="button" class="secondary" aria-label={`Roll ${k.prefix}`} onClick={() => setRolling(k.id)}>
                    Roll
                  </button>
                  <button type="button" class="secondary" aria-label={`Revoke ${k.prefix}`} onClick={() => setConfirming(k.id)}>
                    Revoke
                  </button>
                </span>
              )}
            </td>
          </tr>
        ))}
      </Table>
    </section>
  )
}

// ---------------------------------------------------------------- audit log

interface AuditEntry {
  id: string
  at: string
  actorKind: string
  actorLabel: string
  action: string
  target: string | null
  details: string | null
  address: string | null
}

interface AuditPage {
  auditEvents: { totalCount: number; edges: { node: AuditEntry }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } }
}

function AuditSection() {
  const [entries, setEntries] = useState<AuditEntry[]>([])
  const [total, setTotal] = useState(0)
  // The cursors of the pages seen, so "Newer" goes back without counting offsets.
  const [cursors, setCursors] = useState<(string | null)[]>([null])
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const show = useCallback(async (after: string | null) => {
    const r = await gql<AuditPage>(D.auditEvents, { after })
    setError(problem(r.errors))
    if (!r.data) return false
    setEntries(r.data.auditEvents.edges.map((e) => e.node))
    setTotal(r.data.auditEvents.totalCount)
    setNext(r.data.auditEvents.pageInfo.hasNextPage ? r.data.auditEvents.pageInfo.endCursor : null)
    return true
  }, [])
  useEffect(() => void show(null), [show])
  async function older() {
    if (next && (await show(next))) setCursors((c) => [...c, next])
  }
  async function newer() {
    const previous = cursors.slice(0, -1)
    if (previous.length && (await show(previous.at(-1)!))) setCursors(previous)
  }
  return (
    <section aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit log</h2>
      <p class="muted">
        Every change to keys, console sessions, the webhook and account settings: who, what, when and from where ({total} entries).
      </p>
      <ErrorText id="audit-error" text={error} />
      <Table columns={['When', 'Who', 'What', 'On', 'From']} testId="audit-log">
        {entries.map((e) => (
          <tr key={e.id}>
            <td>{when(e.at)}</td>
            <td>{e.actorKind === 'API_KEY' ? <span class="mono">{e.actorLabel}…</span> : e.actorLabel}</td>
            <td>
              <code>{e.action}</code>
              {e.details && <div class="muted mono">{e.details}</div>}
            </td>
            <td class="mono">{e.target ?? '—'}</td>
            <td class="mono">{e.address ?? '—'}</td>
          </tr>
        ))}
      </Table>
      <p class="row">
        <button type="button" class="secondary" disabled={cursors.length < 2} onClick={() => void newer()}>
          Newer
        </button>
        <button type="button" class="secondary" disabled={!next} onClick={() => void older()}>
          Older
        </button>
      </p>
    </section>
  )
}

// ---------------------------------------------------------------- webhook

interface Webhook {
  url: string
  secret: string
  enabled: boolean
  disabledReason: string | null
  previousSecretExpiresAt: string | null
}

interface Attempt {
  attempt: number
  statusCode: number | null
  durationMs: number
  error: string | null
  at: string
  responseHeaders: string | null
  responseBody: string | null
  responseTruncated: boolean
}

interface Endpoint {
  id: string
  url: string
  eventTypes: string[]
  payloadFormat: string
  enabled: boolean
  disabledReason: string | null
}

interface Delivery {
  id: string
  state: 'PENDING' | 'DELIVERED' | 'FAILED'
  test: boolean
  messageId: string | null
  attempts: number
  nextAttemptAt: string
  lastError: string | null
  createdAt: string
  body: string
  endpoint: { id: string; url: string } | null
  attemptLog: Attempt[]
}

/** Follows a subscription over Server-Sent Events (a POST, so it carries the CSRF header), reconnecting after a drop. */
function useSubscription<T>(query: string, onData: (data: T) => void, setLive: (live: boolean) => void) {
  // The latest callback, so a stream opened once sees the current filter.
  const latest = useRef(onData)
  latest.current = onData
  useEffect(() => {
    let closed = false
    let controller: AbortController | null = null
    async function follow() {
      while (!closed) {
        controller = new AbortController()
        try {
          const response = await fetch('/graphql', {
            method: 'POST',
            credentials: 'same-origin',
            headers: { ...headers, Accept: 'text/event-stream' },
            body: JSON.stringify({ query }),
            signal: controller.signal,
          })
          if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`)
          setLive(true)
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
          let buffer = ''
          for (;;) {
            const { value, done } = await reader.read()
            if (done) break
            buffer += value
            let end: number
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, end)
              buffer = buffer.slice(end + 2)
              const data = block
                .split('\n')
                .filter((line) => line.startsWith('data:'))
                .map((line) => line.slice(5).trim())
                .join('\n')
              if (!data) continue
              const result = JSON.parse(data) as Result<T>
              if (result.data) latest.current(result.data)
            }
          }
        } catch {
          // dropped: try again below
        }
        setLive(false)
        if (!closed) await new Promise((resolve) => setTimeout(resolve, 2000))
      }
    }
    void follow()
    return () => {
      closed = true
      controller?.abort()
    }
  }, [query])
}

/** What the receiver answered to one attempt, as kept (at most 2 KiB of headers and 4 KiB of body). */
function AnswerDetails({ attempt }: { attempt: Attempt }) {
  return (
    <details>
      <summary>Answer{attempt.responseTruncated ? ' (cut)' : ''}</summary>
      <pre class="mono">{attempt.responseHeaders}</pre>
      <pre class="mono">{attempt.responseBody || '(empty body)'}</pre>
    </details>
  )
}

const EVENT_TYPES = [
  ['MESSAGE_STATUS', 'delivery reports'],
  ['TEST', 'test events'],
] as const

const eventLabel = (type: string) => type.toLowerCase().replace('_', '.')
const formatLabel = (format: string) => (format === 'STANDARD' ? 'Standard Webhooks envelope' : 'delivery report')

/** An endpoint's event types (checkboxes) and body (a select): the add form's and the edit form's. */
function EndpointChoices({
  prefix,
  types,
  setTypes,
  format,
  setFormat,
}: {
  prefix: string
  types: string[]
  setTypes: (types: string[]) => void
  format: string
  setFormat: (format: string) => void
}) {
  return (
    <>
      <fieldset>
        <legend>Events</legend>
        {EVENT_TYPES.map(([type, label]) => (
          <label key={type}>
            <input
              type="checkbox"
              checked={types.includes(type)}
              onChange={(e) => setTypes(e.currentTarget.checked ? [...types, type] : types.filter((t) => t !== type))}
            />{' '}
            {label}
          </label>
        ))}
      </fieldset>
      <div>
        <label for={`${prefix}-format`}>Body</label>
        <select id={`${prefix}-format`} value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
          <option value="LEGACY">delivery report</option>
          <option value="STANDARD">Standard Webhooks envelope</option>
        </select>
      </div>
    </>
  )
}

/** Changes one endpoint's URL, events and body; its secret stays. Focus moves to its URL field when it opens. */
function EditEndpoint({ endpoint, onDone }: { endpoint: Endpoint; onDone: (saved: boolean) => void }) {
  const [url, setUrl] = useState(endpoint.url)
  const [types, setTypes] = useState<string[]>(endpoint.eventTypes)
  const [format, setFormat] = useState(endpoint.payloadFormat)
  const [error, setError] = useState<string | null>(null)
  const field = useRef<HTMLInputElement>(null)
  useEffect(() => field.current?.focus(), [endpoint.id])
  async function save(event: Event) {
    event.preventDefault()
    const input = { ...(url.trim() !== endpoint.url ? { url } : {}), eventTypes: types, payloadFormat: format }
    const r = await gql(D.updateEndpoint, { id: endpoint.id, input })
    setError(problem(r.errors))
    if (!r.errors) onDone(true)
  }
  return (
    <form onSubmit={(e) => void save(e)} class="panel" aria-labelledby="edit-endpoint-heading" noValidate data-testid="edit-endpoint">
      <h4 id="edit-endpoint-heading">Edit endpoint {endpoint.url}</h4>
      <div class="row">
        <div style="flex: 1 1 20rem">
          <label for="edit-endpoint-url">Endpoint URL</label>
          <input
            id="edit-endpoint-url"
            ref={field}
            type="url"
            style="width: 100%"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
            aria-describedby="edit-endpoint-error"
          />
        </div>
        <EndpointChoices prefix="edit-endpoint" types={types} setTypes={setTypes} format={format} setFormat={setFormat} />
      </div>
      <ErrorText id="edit-endpoint-error" text={error} />
      <div class="row">
        <button type="submit">Save endpoint</button>
        <button type="button" class="secondary" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  )
}

/**
 * Every endpoint of the account (the first is the default one above): each can be edited, sent a
 * test event, shown in the delivery log alone, or removed (after a confirmation); and a form adds one.
 */
function EndpointList({
  endpoints,
  reload,
  onChange,
  onShowDeliveries,
}: {
  endpoints: Endpoint[]
  reload: () => Promise<void>
  onChange: () => void
  onShowDeliveries: (endpointId: string) => void
}) {
  const [url, setUrl] = useState('')
  const [types, setTypes] = useState<string[]>(EVENT_TYPES.map(([t]) => t))
  const [format, setFormat] = useState('LEGACY')
  const [error, setError] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [secret, setSecret] = useState<string | null>(null)
  const [confirming, setConfirming] = useState<string | null>(null)
  const [editing, setEditing] = useState<string | null>(null)
  async function add(event: Event) {
    event.preventDefault()
    setSecret(null)
    setNotice(null)
    const r = await gql<{ createWebhookEndpoint: { secret: string } }>(D.createEndpoint, {
      input: { url, eventTypes: types, payloadFormat: format },
    })
    setError(problem(r.errors))
    if (r.data) {
      setSecret(r.data.createWebhookEndpoint.secret)
      setUrl('')
    }
    await reload()
    onChange()
  }
  async function remove(id: string) {
    setNotice(null)
    const r = await gql(D.deleteEndpoint, { id })
    setError(problem(r.errors))
    setConfirming(null)
    if (editing === id) setEditing(null)
    await reload()
    onChange()
  }
  async function sendTest(endpoint: Endpoint) {
    setNotice(null)
    const r = await gql(D.sendTestTo, { endpointId: endpoint.id })
    setError(problem(r.errors))
    if (!r.errors) setNotice(`Test event queued for ${endpoint.url}.`)
    onChange()
  }
  const edited = endpoints.find((e) => e.id === editing)
  return (
    <div>
      <h3 id="endpoints-heading">Endpoints</h3>
      <p class="muted">Each endpoint has its own secret, events and body. The first is the one above.</p>
      <Table columns={['URL', 'Events', 'Body', 'State', 'Actions']} testId="endpoints">
        {endpoints.map((e) => (
          <tr key={e.id} data-endpoint={e.id}>
            <td class="mono">{e.url}</td>
            <td>{e.eventTypes.map(eventLabel).join(', ')}</td>
            <td>{formatLabel(e.payloadFormat)}</td>
            <td>{e.enabled ? 'enabled' : `disabled: ${e.disabledReason ?? ''}`}</td>
            <td>
              {confirming === e.id ? (
                <Confirm
                  text={`Remove ${e.url}? Nothing more is sent to it, and its secret is gone.`}
                  yes={`Yes, remove ${e.url}`}
                  onYes={() => void remove(e.id)}
                  onCancel={() => setConfirming(null)}
                />
              ) : (
                <div class="row">
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Edit endpoint ${e.url}`}
                    aria-expanded={editing === e.id}
                    onClick={() => {
                      setNotice(null)
                      setEditing(editing === e.id ? null : e.id)
                    }}
                  >
                    Edit
                  </button>
                  <button type="button" class="secondary" aria-label={`Send test to ${e.url}`} onClick={() => void sendTest(e)}>
                    Send test
                  </button>
                  <button type="button" class="secondary" aria-label={`Deliveries to ${e.url}`} onClick={() => onShowDeliveries(e.id)}>
                    Deliveries
                  </button>
                  <button type="button" class="secondary" aria-label={`Remove endpoint ${e.url}`} onClick={() => setConfirming(e.id)}>
                    Remove
                  </button>
                </div>
              )}
            </td>
          </tr>
        ))}
      </Table>
      {edited && (
        <EditEndpoint
          key={edited.id}
          endpoint={edited}
          onDone={(saved) => {
            setEditing(null)
            setError(null)
            if (saved) {
              setNotice(`Endpoint ${edited.url} saved.`)
              void reload().then(onChange)
            }
          }}
        />
      )}
      <p role="status" class="ok" data-testid="endpoint-notice">
        {notice}
      </p>
      <form onSubmit={(e) => void add(e)} class="row" noValidate>
        <div style="flex: 1 1 20rem">
          <label for="endpoint-url">New endpoint URL</label>
          <input
            id="endpoint-url"
            type="url"
            style="width: 100%"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
            aria-describedby="endpoint-error"
          />
        </div>
        <EndpointChoices prefix="endpoint" types={types} setTypes={setTypes} format={format} setFormat={setFormat} />
        <button type="submit">Add endpoint</button>
      </form>
      <ErrorText id="endpoint-error" text={error} />
      {secret && (
        <p role="status" class="ok">
          Endpoint added. Its signing secret: <code data-testid="endpoint-secret">{secret}</code>
        </p>
      )}
    </div>
  )
}

/** "Recover every failed delivery since": they go back into the outbox, sent within the usual limits. */
function RecoverForm({ onDone }: { onDone: () => void }) {
  const [since, setSince] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  async function recover(event: Event) {
    event.preventDefault()
    setNotice(null)
    const at = new Date(since)
    if (!since || Number.isNaN(at.getTime())) return setError('Choose a date and time.')
    const r = await gql<{ recoverFailedWebhookDeliveries: { recovered: number; more: boolean } }>(D.recover, { since: at.toISOString() })
    setError(problem(r.errors))
    const done = r.data?.recoverFailedWebhookDeliveries
    if (done) setNotice(`${done.recovered} failed deliveries queued again${done.more ? '; more are left: recover again' : ''}.`)
    onDone()
  }
  return (
    <form onSubmit={(e) => void recover(e)} class="row" noValidate>
      <div>
        <label for="recover-since">Failed since</label>
        <input
          id="recover-since"
          type="datetime-local"
          value={since}
          onInput={(e) => setSince(e.currentTarget.value)}
          aria-describedby="recover-error"
        />
      </div>
      <button type="submit" class="secondary">
        Recover failed deliveries
      </button>
      <ErrorText id="recover-error" text={error} />
      <p role="status" class="ok">
        {notice}
      </p>
    </form>
  )
}

function WebhookSection() {
  const [webhook, setWebhook] = useState<Webhook | null>(null)
  const [url, setUrl] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [showSecret, setShowSecret] = useState(false)
  const [deliveries, setDeliveries] = useState<Delivery[]>([])
  const [filter, setFilter] = useState('')
  /** The endpoint whose deliveries the log shows; '' for every endpoint. */
  const [endpointFilter, setEndpointFilter] = useState('')
  const [endpoints, setEndpoints] = useState<Endpoint[]>([])
  const [live, setLive] = useState(false)
  const [loaded, setLoaded] = useState(false)
  /** Which destructive action waits for its confirmation. */
  const [confirming, setConfirming] = useState<'rotate' | 'remove' | null>(null)
  const [overlap, setOverlap] = useState('24')
  /** Reads the webhook; the URL field takes the stored URL only when asked (first load, a save), never over what is being typed. */
  const load = useCallback(async (resetField = false) => {
    const r = await gql<{ webhook: Webhook | null }>(D.webhook)
    setWebhook(r.data?.webhook ?? null)
    if (resetField) setUrl(r.data?.webhook?.url ?? '')
    setLoaded(true)
  }, [])
  const loadDeliveries = useCallback(async () => {
    const r = await gql<{ webhookDeliveries: Delivery[] }>(D.deliveries, { state: filter || null, endpointId: endpointFilter || null })
    if (r.data) setDeliveries(r.data.webhookDeliveries)
  }, [filter, endpointFilter])
  const loadEndpoints = useCallback(async () => {
    const r = await gql<{ webhookEndpoints: Endpoint[] }>(D.endpoints)
    if (r.data) setEndpoints(r.data.webhookEndpoints)
  }, [])
  useEffect(() => void load(true), [load])
  useEffect(() => void loadEndpoints(), [loadEndpoints])
  useEffect(() => void loadDeliveries(), [loadDeliveries])
  useSubscription<{ webhookDeliveryUpdates: Delivery }>(
    D.deliveryUpdates,
    ({ webhookDeliveryUpdates: d }) =>
      setDeliveries((list) => {
        const rest = list.filter((x) => x.id !== d.id)
        const shown = (!filter || d.state === filter) && (!endpointFilter || d.endpoint?.id === endpointFilter)
        return (shown ? [d, ...rest] : rest).sort((a, b) =>
          a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1,
        )
      }),
    setLive,
  )

  async function act(query: string, variables: Record<string, unknown>, done: string, resetField = false) {
    setNotice(null)
    const r = await gql(query, variables)
    setError(problem(r.errors))
    await load(resetField && !r.errors)
    // The default endpoint is also the first row of the endpoints table.
    await loadEndpoints()
    setNotice(r.errors ? null : done)
    return !r.errors
  }
  async function rotate() {
    // The API checks the range (0 to 168); a field that holds no whole number never gets there.
    const hours = /^\s*\d+\s*$/.test(overlap) ? Number(overlap) : null
    if (hours === null) {
      setNotice(null)
      return setError('Overlap: enter a number of hours from 0 to 168.')
    }
    const done = hours
      ? `Secret rotated: for ${hours} hour${hours === 1 ? '' : 's'} each request carries both signatures.`
      : 'Secret rotated: the previous secret no longer signs.'
    if (await act(D.rotateSecret, { overlapHours: hours }, done)) setConfirming(null)
  }
  const save = (event: Event) => {
    event.preventDefault()
    void act(D.setWebhook, { url }, 'Webhook saved.', true)
  }
  if (!loaded)
    return (
      <section aria-labelledby="webhook-heading">
        <h2 id="webhook-heading">Webhook</h2>
        <p>Loading…</p>
      </section>
    )
  return (
    <section aria-labelledby="webhook-heading">
      <h2 id="webhook-heading">Webhook</h2>
      <form onSubmit={save} class="row" noValidate>
        <div style="flex: 1 1 20rem">
          <label for="webhook-url">Webhook URL</label>
          <input
            id="webhook-url"
            type="url"
            style="width: 100%"
            value={url}
            placeholder="https://example.com/sms-reports"
            onInput={(e) => setUrl(e.currentTarget.value)}
            aria-describedby="webhook-error"
          />
        </div>
        <button type="submit">Save URL</button>
        {webhook && confirming !== 'remove' && (
          <button type="button" class="secondary" onClick={() => setConfirming('remove')}>
            Remove webhook
          </button>
        )}
      </form>
      {webhook && confirming === 'remove' && (
        <Confirm
          text={`Remove the webhook ${webhook.url}? Delivery reports stop going to it, and its secret is gone.`}
          yes="Yes, remove the webhook"
          onYes={() => void act(D.removeWebhook, {}, 'Webhook removed.', true).then((ok) => ok && setConfirming(null))}
          onCancel={() => setConfirming(null)}
        />
      )}
      <ErrorText id="webhook-error" text={error} />
      <p role="status" class="ok">
        {notice}
      </p>
      {webhook && (
        <div>
          {!webhook.enabled && <p class="error">Disabled: {webhook.disabledReason}. Saving the URL enables it again.</p>}
          <p>
            Signing secret: <code data-testid="webhook-secret">{showSecret ? webhook.secret : 'whsec_' + '•'.repeat(12)}</code>{' '}
            <button type="button" class="secondary" aria-pressed={showSecret} onClick={() => setShowSecret(!showSecret)}>
              {showSecret ? 'Hide secret' : 'Show secret'}
            </button>
          </p>
          {webhook.previousSecretExpiresAt && (
            <p class="muted">The previous secret signs too until {when(webhook.previousSecretExpiresAt)}.</p>
          )}
          {confirming === 'rotate' && (
            <Confirm
              text="Rotate the signing secret? Receivers need the new one; during the overlap each request is signed with both."
              yes="Yes, rotate the secret"
              onYes={() => void rotate()}
              onCancel={() => {
                setConfirming(null)
                setError(null)
              }}
            >
              <label for="rotate-overlap">Overlap in hours (0 to 168)</label>
              <input
                id="rotate-overlap"
                type="number"
                inputMode="numeric"
                min={0}
                max={168}
                step={1}
                value={overlap}
                onInput={(e) => setOverlap(e.currentTarget.value)}
                aria-describedby="webhook-error"
              />
            </Confirm>
          )}
          <div class="row">
            {confirming !== 'rotate' && (
              <button type="button" class="secondary" onClick={() => setConfirming('rotate')}>
                Rotate secret
              </button>
            )}
            <button
              type="button"
              onClick={() =>
                void act(D.sendTest, {}, 'Test event queued.').then((ok) => {
                  if (ok) void loadDeliveries()
                })
              }
            >
              Send test event
            </button>
          </div>
        </div>
      )}
      <EndpointList
        endpoints={endpoints}
        reload={loadEndpoints}
        onChange={() => {
          void load(true)
          void loadDeliveries()
        }}
        onShowDeliveries={(id) => {
          setEndpointFilter(id)
          document.getElementById('delivery-endpoint')?.focus()
        }}
      />
      <h3 id="deliveries-heading">Delivery log</h3>
      <RecoverForm onDone={() => void loadDeliveries()} />
      <div class="row">
        <div>
          <label for="delivery-filter">Show</label>
          <select id="delivery-filter" value={filter} onChange={(e) => setFilter(e.currentTarget.value)}>
            <option value="">every delivery</option>
            <option value="PENDING">pending</option>
            <option value="DELIVERED">delivered</option>
            <option value="FAILED">failed</option>
          </select>
        </div>
        <div style="min-width: 0; max-width: 100%">
          <label for="delivery-endpoint">To</label>
          <select
            id="delivery-endpoint"
            style="max-width: 100%"
            value={endpointFilter}
            onChange={(e) => setEndpointFilter(e.currentTarget.value)}
          >
            <option value="">every endpoint</option>
            {endpoints.map((e) => (
              <option key={e.id} value={e.id}>
                {e.url}
              </option>
            ))}
          </select>
        </div>
        <p class="muted" aria-live="polite" data-testid="live">
          {live ? 'Live: new attempts appear as they happen.' : 'Connecting live updates…'}
        </p>
      </div>
      <Table columns={['Delivery', 'State', 'Attempts', 'Next retry', 'Action']} testId="deliveries">
        {deliveries.map((d) => (
          <tr key={d.id} data-delivery={d.id} data-state={d.state}>
            <td>
              <span class="mono">{d.id}</span>
              <br />
              <span class="muted">
                {d.test ? 'test event' : `report of ${d.messageId}`}, {when(d.createdAt)}
                {d.endpoint ? `, to ${d.endpoint.url}` : ', endpoint removed'}
              </span>
              <details>
                <summary>Request body</summary>
                <pre class="mono">{d.body}</pre>
              </details>
            </td>
            <td>{d.state.toLowerCase()}</td>
            <td>
              {d.attemptLog.length ? (
                <ul>
                  {d.attemptLog.map((a, i) => (
                    <li key={i}>
                      #{a.attempt}: {a.statusCode ?? 'no answer'}, {a.durationMs} ms{a.error ? `, ${a.error}` : ''}
                      {a.statusCode !== null && <AnswerDetails attempt={a} />}
                    </li>
                  ))}
                </ul>
              ) : (
                'none yet'
              )}
            </td>
            <td>{d.state === 'PENDING' ? when(d.nextAttemptAt) : '—'}</td>
            <td>
              {d.state !== 'PENDING' && (
                <button
                  type="button"
                  class="secondary"
                  aria-label={`Replay ${d.id}`}
                  onClick={() => void act(D.replay, { id: d.id }, `Delivery ${d.id} queued again.`)}
                >
                  Replay
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
    </section>
  )
}

// ---------------------------------------------------------------- the page

/** The navigation shell's links: each section's heading id and its name (a new section adds its line). */
const SECTIONS: [string, string][] = [
  ['account-heading', 'Account'],
  ['keys-heading', 'Keys'],
  ['audit-heading', 'Audit'],
  ['webhook-heading', 'Webhooks'],
  ['deliveries-heading', 'Deliveries'],
]

function Console() {
  const [account, setAccount] = useState<Account | null>(null)
  useEffect(() => {
    void gql<{ account: Account }>(D.account).then((r) => setAccount(r.data?.account ?? null))
  }, [])
  async function signOut(everywhere: boolean) {
    await gql(D.signOut, { everywhere })
    location.assign('/console')
  }
  return (
    <>
      <a class="skip" href="#main">
        Skip to the console
      </a>
      <header class="shell">
        <h1>Account console{account ? `: ${account.name}` : ''}</h1>
        <nav aria-label="Console">
          <ul>
            {SECTIONS.map(([target, label]) => (
              <li key={target}>
                <a href={`#${target}`}>{label}</a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="row sign-out">
          <button type="button" class="secondary" onClick={() => void signOut(false)}>
            Sign out
          </button>
          <button type="button" class="secondary" onClick={() => void signOut(true)}>
            Sign out everywhere
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <AccountSection account={account} />
        <KeysSection />
        <WebhookSection />
        <AuditSection />
      </main>
    </>
  )
}

const root = document.getElementById('app')!
root.replaceChildren() // the server's "Loading the console…"
render(<Console />, root)
