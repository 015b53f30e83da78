// The docs pages in a real browser (Debian's chromium driven by playwright-core) against one real
// server process, with every request that is not to this machine blocked: a page that needs the
// internet fails here.
import { execFile, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { spawnServer } from './kit/server-process.js'
import {
  CHROMIUM,
  CHROMIUM_ARGS as ARGS,
  LOCAL_HOSTS as LOCAL,
  SCREENSHOTS,
  seriousAxeViolations,
  skipBrowserTests,
} from './kit/browser.js'

const skip = skipBrowserTests
if (skip) console.warn(`browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium); they always run when CI is set`)

describe.skipIf(skip)('docs pages in a browser, offline', () => {
  let dir: string
  let server: ChildProcess
  let base: string
  let apiKey: string
  let browser: Browser
  let context: BrowserContext

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-browser-'))
    const env = {
      ...process.env,
      DATABASE_URL: `file:${join(dir, 'gateway.db')}`,
      LOG_LEVEL: 'info',
      WORKER_ENABLED: 'false',
      PORT: '0',
      HOST: '127.0.0.1',
    }
    const created = await promisify(execFile)('npm', ['run', '--silent', 'cli', '--', 'account:create', '--name', 'Browser'], { env })
    apiKey = JSON.parse(created.stdout.trim().split('\n').pop()!).apiKey
    // The demo-tv channel, for the subscription GraphiQL runs.
    await promisify(execFile)('npm', ['run', '--silent', 'cli', '--', 'demo:seed'], { env })
    const spawned = spawnServer(env)
    server = spawned.child
    base = await spawned.listening(60_000)
    // Data for GraphiQL to show, written through the REST API of the same server.
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as any)
    const group = await post('/api/contact/group/create', { name: 'Customers' })
    await post('/api/contact/save', { mobile: '0712345678', first_name: 'Wanjiru', groups: [group.reference] })

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    mkdirSync(SCREENSHOTS, { recursive: true })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    server?.kill('SIGTERM')
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** A page that may only reach this machine; `blocked` records what it tried elsewhere. */
  async function open(path: string) {
    const page = await context.newPage()
    const blocked: string[] = []
    const errors: string[] = []
    await page.route('**/*', (route) => {
      if (LOCAL.has(new URL(route.request().url()).hostname)) return route.continue()
      blocked.push(route.request().url())
      return route.abort('blockedbyclient')
    })
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${base}${path}`)
    return { page, blocked, errors }
  }

  /** Each page must have needed nothing but this machine, and thrown nothing. */
  async function done({ page, blocked, errors }: Awaited<ReturnType<typeof open>>) {
    await page.close()
    expect(blocked, 'requests that left the machine').toEqual([])
    expect(errors, 'page errors').toEqual([])
  }

  async function screenshot(page: Page, name: string) {
    const path = join(SCREENSHOTS, `${name}.png`)
    await page.screenshot({ path })
    console.log(`screenshot: ${path}`)
  }

  it('GraphiQL renders with the Headers tab preset; with the real key it runs a query and shows the data', async () => {
    const opened = await open('/graphql')
    const { page } = opened
    const query = page.locator('.monaco-editor[data-uri$="operation.graphql"]')
    await query.waitFor({ timeout: 30_000 })
    // Monaco renders spaces as no-break spaces.
    const textOf = async (editor: typeof query) => (await editor.innerText()).replace(/\s+/g, ' ')
    expect(await textOf(query)).toContain('query Overview {')
    const headers = page.locator('.monaco-editor[data-uri$="headers.json"]')
    await headers.waitFor()
    expect(await textOf(headers)).toContain('"Authorization": "Bearer <your API key>"')

    // Pasted, not typed: typing would trigger the editor's auto-closing quotes and braces.
    await headers.click()
    await page.evaluate((text) => navigator.clipboard.writeText(text), JSON.stringify({ Authorization: `Bearer ${apiKey}` }, null, 2))
    await page.keyboard.press('Control+A')
    await page.keyboard.press('Control+V')
    await page.getByRole('button', { name: /Execute query/ }).click()
    // Two operations in the default document: GraphiQL asks which one.
    await page.getByRole('menuitem', { name: 'Overview' }).click()
    const response = page.locator('.graphiql-response')
    await expect.poll(() => textOf(response), { timeout: 20_000 }).toContain('"firstName": "Wanjiru"')
    const text = await textOf(response)
    expect(text).toContain('"mobile": "+254712345678"')
    expect(text).toContain('"name": "Customers"')
    expect(text).not.toContain('UNAUTHENTICATED')
    await screenshot(page, 'graphiql')
    await done(opened)
  }, 90_000)

  it('GraphiQL runs a subscription from the page: the first event arrives and the stream stays open', async () => {
    // A context of its own: GraphiQL keeps its tabs in localStorage, and the test above left some.
    const shared = context
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } })
    const opened = await open('/graphql')
    const { page } = opened
    await page.locator('.monaco-editor[data-uri$="operation.graphql"]').waitFor({ timeout: 30_000 })
    await page.getByRole('button', { name: /Execute query/ }).click()
    await page.getByRole('menuitem', { name: 'LiveNowPlaying' }).click()
    const response = page.locator('.graphiql-response')
    await expect.poll(async () => (await response.innerText()).replace(/\s+/g, ' '), { timeout: 20_000 }).toContain('"nowPlaying": {')
    expect((await response.innerText()).replace(/\s+/g, ' ')).toContain('"isLive"')
    // A subscription running shows a stop button in place of the run button.
    await page.getByRole('button', { name: /Stop/ }).waitFor()
    await page.getByRole('button', { name: /Stop/ }).click()
    await done(opened)
    await context.close()
    context = shared
  }, 90_000)

  it('the API reference renders every operation of the OpenAPI document', async () => {
    const opened = await open('/api/docs')
    const { page } = opened
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 })
    const document = (await (await fetch(`${base}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> }
    const expected = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    )
    const methods = await page.locator('.opblock-summary-method').allInnerTexts()
    const paths = await page.locator('.opblock-summary-path').allInnerTexts()
    const shown = methods.map((m, i) => `${m} ${paths[i]!.replace(/\u200b/g, '')}`)
    expect(shown.sort()).toEqual(expected.sort())
    expect(shown).toHaveLength(28) // 13 messaging, 2 sending, 1 delivery report, 9 channel, 3 guides
    expect(await page.locator('.info .title').innerText()).toContain('sms-channel-gateway REST API')
    expect(await page.getByRole('button', { name: /Authorize/ }).count()).toBeGreaterThan(0)
    await screenshot(page, 'api-docs')
    await done(opened)
  }, 90_000)

  it('the home page links the faces of the service', async () => {
    const opened = await open('/')
    const { page } = opened
    const hrefs = await page.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')))
    expect(hrefs).toEqual([
      '/console',
      '/graphql',
      '/graphql/schema.graphql',
      '/api/docs',
      '/api/openapi.json',
      '/healthz',
      '/readyz',
      '/metrics',
    ])
    await screenshot(page, 'home')
    await done(opened)
  })

  it.each([1280, 360])(
    'every page passes axe (no serious or critical violation) at %i px: home, GraphiQL, the API reference opened up',
    async (width) => {
      const shared = context
      context = await browser.newContext({ viewport: { width, height: 900 } })
      const home = await open('/')
      expect(await seriousAxeViolations(home.page), `axe on / at ${width}px`).toEqual([])
      await done(home)

      const graphiql = await open('/graphql')
      await graphiql.page.locator('.monaco-editor[data-uri$="operation.graphql"]').waitFor({ timeout: 30_000 })
      expect(await seriousAxeViolations(graphiql.page), `axe on /graphql at ${width}px`).toEqual([])
      await done(graphiql)

      const reference = await open('/api/docs')
      const { page } = reference
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 })
      expect(await seriousAxeViolations(page), `axe on /api/docs at ${width}px`).toEqual([])
      // An operation opened, with its form ready to try, and the key dialog: the screens people use.
      await page.locator('.opblock-summary-control').first().click()
      await page.getByRole('button', { name: 'Try it out' }).first().click()
      expect(await seriousAxeViolations(page), `axe on an operation at ${width}px`).toEqual([])
      await page
        .getByRole('button', { name: /Authorize/ })
        .first()
        .click()
      await page.locator('.modal-ux').waitFor()
      expect(await seriousAxeViolations(page), `axe on the key dialog at ${width}px`).toEqual([])
      await screenshot(page, `api-docs-${width}`)
      await done(reference)
      await context.close()
      context = shared
    },
    240_000,
  )

  it('blocks and records a request to any other host, so a page needing the internet fails', async () => {
    const opened = await open('/')
    await opened.page.evaluate(() => fetch('https://unpkg.com/graphiql/graphiql.min.css').catch(() => 'refused'))
    expect(opened.blocked).toEqual(['https://unpkg.com/graphiql/graphiql.min.css'])
    await opened.page.close()
  })
})
