// The account console in a real browser (Debian's chromium driven by playwright-core), against
// real server processes on each test database, with every request that is not to this machine
// blocked. Two instances share the database: the second refuses private webhook addresses (the
// first allows them, to reach the local receiver) and shows that a revoked key is refused on
// every instance. Each screen passes an axe-core scan with no serious or critical violation.
import type { ChildProcess } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { runCli, spawnServer } from './kit/server-process.js'
import {
  CHROMIUM,
  CHROMIUM_ARGS as ARGS,
  LOCAL_HOSTS as LOCAL,
  SCREENSHOTS,
  seriousAxeViolations,
  skipBrowserTests,
} from './kit/browser.js'
import { targets, type TestDatabase } from './kit/databases.js'
import { reply, startReceiver } from './kit/receiver.js'

const skip = skipBrowserTests
if (skip)
  console.warn(`console browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium); they always run when CI is set`)

describe.skipIf(skip).each(targets)('the account console in a browser on $name', (target) => {
  let database: TestDatabase
  let servers: ChildProcess[] = []
  let base: string
  let strictBase: string
  let env: Record<string, string | undefined>
  let accountId: string
  let browser: Browser
  let context: BrowserContext
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  const blocked: string[] = []
  const pageErrors: string[] = []

  const cli = (...args: string[]) => runCli(env, ...args)

  beforeAll(async () => {
    database = await target.create()
    env = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0' }
    accountId = JSON.parse(await cli('account:create', '--name', 'Console Ltd')).account.uuid
    const first = spawnServer({ ...env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'info' })
    const second = spawnServer({ ...env, WORKER_ENABLED: 'false', LOG_LEVEL: 'info' })
    servers = [first.child, second.child]
    ;[base, strictBase] = await Promise.all([first.listening(60_000), second.listening(60_000)])
    receiver = await startReceiver(reply(204))
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    await context.route('**/*', (route) => {
      if (LOCAL.has(new URL(route.request().url()).hostname)) return route.continue()
      blocked.push(route.request().url())
      return route.abort('blockedbyclient')
    })
    mkdirSync(SCREENSHOTS, { recursive: true })
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    for (const s of servers) s.kill('SIGTERM')
    await receiver?.close()
    await database?.drop()
    expect(blocked, 'requests that left the machine').toEqual([])
  })

  async function newPage(): Promise<Page> {
    const page = await context.newPage()
    page.on('pageerror', (e) => pageErrors.push(e.message))
    return page
  }

  /** axe-core in the page: no serious or critical violation. */
  async function accessible(page: Page, screen: string) {
    expect(await seriousAxeViolations(page), `axe on ${screen}`).toEqual([])
  }

  /**
   * One screen at 1280 and at 360 px: the page does not scroll sideways, every action button of
   * every table row is inside the viewport, axe passes; a screenshot of each width.
   */
  async function atBothWidths(page: Page, screen: string) {
    for (const width of [1280, 360]) {
      await page.setViewportSize({ width, height: width === 360 ? 740 : 900 })
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
      expect(overflow, `${screen} at ${width} px scrolls sideways`).toBeLessThanOrEqual(0)
      const actions = page.locator('tbody tr button')
      for (let i = 0; i < (await actions.count()); i++) {
        const box = await actions.nth(i).boundingBox()
        if (!box) continue // inside a closed <details>
        const name = await actions.nth(i).innerText()
        expect(box.x, `${name} on ${screen} at ${width} px`).toBeGreaterThanOrEqual(0)
        expect(box.x + box.width, `${name} on ${screen} at ${width} px`).toBeLessThanOrEqual(width)
      }
      await accessible(page, `${screen} at ${width} px`)
      await page.screenshot({ path: join(SCREENSHOTS, `${screen.replace(/\W+/g, '-')}-${width}-${target.name}.png`), fullPage: true })
    }
    await page.setViewportSize({ width: 1280, height: 900 })
  }

  /** A link from the CLI, opened on `origin` (the CLI writes it under PUBLIC_BASE_URL). */
  async function linkPath() {
    const url = new URL(await cli('console:link', '--account', accountId))
    return `${url.pathname}${url.search}`
  }

  let page: Page

  it('signs in from a link (one click), and refuses the link used again', async () => {
    const path = await linkPath()
    page = await newPage()
    await page.goto(`${base}${path}`)
    await atBothWidths(page, 'sign-in')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${base}/console`)
    await page.getByRole('heading', { name: 'Account console: Console Ltd' }).waitFor()
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Keys' }).waitFor()
    const [cookie] = await context.cookies(base)
    expect(cookie).toMatchObject({ name: 'console_session', httpOnly: true, sameSite: 'Strict', secure: false })
    expect(await page.evaluate(() => document.cookie)).toBe('')
    await page.getByTestId('live').getByText('Live').waitFor()
    await accessible(page, 'console')

    const reused = await newPage()
    const answer = await reused.goto(`${base}${path}`)
    expect(answer!.status()).toBe(410)
    await reused.getByText('This sign-in link was used already').waitFor()
    await atBothWidths(reused, 'refused link')
    await reused.close()
  }, 90_000)

  it('creates a key (an empty label is refused inline), uses it over HTTP, revokes it: 401 on both instances', async () => {
    const rows = page.locator('tbody tr[data-prefix]')
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.locator('#key-error').getByText('A label is required').waitFor()
    expect(await rows.count()).toBe(1)

    await page.getByLabel('Label of a new key').fill('Deploys')
    await page.getByRole('button', { name: 'Create key' }).click()
    const key = await page.getByTestId('new-key').innerText()
    expect(key).toMatch(/^gk_[0-9a-f]{12}_/)
    await page.getByRole('button', { name: 'Copy' }).click()
    await page.getByText('Copied.').waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key)
    await expect.poll(() => rows.count()).toBe(2)

    const use = (origin: string) => fetch(`${origin}/api/contacts`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status)
    expect(await use(base)).toBe(200)
    expect(await use(strictBase)).toBe(200)
    const prefix = key.slice(0, 15)
    await page.getByRole('button', { name: `Revoke ${prefix}` }).click()
    await page.getByRole('button', { name: `Yes, revoke ${prefix}` }).click()
    await page.locator(`tr[data-prefix="${prefix}"]`).getByText('revoked').waitFor()
    expect(await use(base)).toBe(401)
    expect(await use(strictBase)).toBe(401)
  }, 60_000)

  it('refuses a malformed and a private webhook URL inline and changes nothing', async () => {
    const strict = await newPage()
    await strict.goto(`${strictBase}/console`)
    await strict.getByRole('heading', { name: 'Account console: Console Ltd' }).waitFor()
    for (const [url, text] of [
      ['not a url', /URL/i],
      ['http://10.20.30.40/hook', /private|public|not allowed/i],
    ] as const) {
      await strict.getByLabel('Webhook URL').fill(url)
      await strict.getByRole('button', { name: 'Save URL' }).click()
      await strict.locator('#webhook-error').getByText(text).waitFor()
    }
    await accessible(strict, 'webhook error')
    await strict.close()
    // Nothing was registered: the console still offers no secret or removal.
    await page.reload()
    await page.getByLabel('Webhook URL').waitFor()
    expect(await page.getByRole('button', { name: 'Remove webhook' }).count()).toBe(0)
  }, 60_000)

  it('sets the webhook to a local receiver; a test event appears in the log without a reload; a failed delivery is replayed', async () => {
    await page.evaluate(() => ((window as any).sameDocument = true))
    await page.getByLabel('Webhook URL').fill(receiver.url)
    await page.getByRole('button', { name: 'Save URL' }).click()
    await page.getByText('Webhook saved.').waitFor()
    const log = page.getByTestId('deliveries')
    await page.getByRole('button', { name: 'Send test event' }).click()
    const delivered = log.locator('tr[data-state="DELIVERED"]')
    await delivered.first().waitFor({ timeout: 20_000 })
    await expect.poll(() => delivered.first().innerText()).toMatch(/#1: 204, \d+ ms/)
    expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ test: true })

    receiver.respond(reply(410))
    await page.getByRole('button', { name: 'Send test event' }).click()
    const failed = log.locator('tr[data-state="FAILED"]')
    await failed.first().waitFor({ timeout: 20_000 })
    await expect.poll(() => failed.first().innerText()).toContain('410')
    const failedId = await failed.first().getAttribute('data-delivery')
    await page.getByLabel('Show').selectOption('FAILED')
    await expect.poll(() => log.locator('tbody tr').count()).toBe(1)
    await page.getByLabel('Show').selectOption('')

    // The 410 disabled the endpoint; saving the URL enables it again, then the replay lands.
    receiver.respond(reply(204))
    await page.getByRole('button', { name: 'Save URL' }).click()
    await page.getByText('Webhook saved.').waitFor()
    await page.getByRole('button', { name: `Replay ${failedId}` }).click()
    await log.locator(`tr[data-delivery="${failedId}"][data-state="DELIVERED"]`).waitFor({ timeout: 20_000 })
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === failedId)).toHaveLength(2)
    expect(await page.evaluate(() => (window as any).sameDocument)).toBe(true)
  }, 90_000)

  it('rotates the secret after a confirmation with a chosen overlap (out of range: refused inline, nothing changed); both secrets verify (standardwebhooks)', async () => {
    const secret = page.getByTestId('webhook-secret')
    await page.getByRole('button', { name: 'Show secret' }).click()
    const before = await secret.innerText()
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    const overlap = page.getByLabel('Overlap in hours (0 to 168)')
    expect(await overlap.inputValue()).toBe('24')
    await accessible(page, 'rotation confirmation')
    // Cancel leaves the secret as it was.
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    for (const [value, text] of [
      ['', /Overlap: enter a number of hours/],
      ['169', /whole number of hours from 0 to 168/],
    ] as const) {
      await overlap.fill(value)
      await page.getByRole('button', { name: 'Yes, rotate the secret' }).click()
      await page.locator('#webhook-error').getByText(text).waitFor()
    }
    await page.reload()
    await page.getByRole('button', { name: 'Show secret' }).click()
    await expect.poll(() => secret.innerText()).toBe(before)
    expect(await page.getByText('The previous secret signs too').count()).toBe(0)

    await page.getByRole('button', { name: 'Rotate secret' }).click()
    await overlap.fill('2')
    await page.getByRole('button', { name: 'Yes, rotate the secret' }).click()
    await page.getByText('Secret rotated: for 2 hours each request carries both signatures.').waitFor()
    await page.getByText('The previous secret signs too').waitFor()
    expect(await overlap.count()).toBe(0)
    await expect.poll(() => secret.innerText()).not.toBe(before)
    const after = await secret.innerText()
    expect(after).toMatch(/^whsec_/)
    const count = receiver.received.length
    await page.getByRole('button', { name: 'Send test event' }).click()
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(count + 1)
    const got = receiver.received.at(-1)!
    const headers = {
      'webhook-id': got.headers['webhook-id'] as string,
      'webhook-timestamp': got.headers['webhook-timestamp'] as string,
      'webhook-signature': got.headers['webhook-signature'] as string,
    }
    expect(new Webhook(after).verify(got.body, headers)).toMatchObject({ test: true })
    expect(new Webhook(before).verify(got.body, headers)).toMatchObject({ test: true })
    await page.getByRole('button', { name: 'Hide secret' }).click()
    await accessible(page, 'console with a webhook and its log')
    // docs/console.png is this screenshot.
    await page.screenshot({ path: join(SCREENSHOTS, `console-${target.name}.png`), fullPage: true })
  }, 120_000)

  it('removes an endpoint and the webhook only after a confirmation; Cancel keeps them', async () => {
    const table = page.getByTestId('endpoints')
    const second = `${receiver.url}?second`
    await page.getByLabel('New endpoint URL').fill(second)
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByTestId('endpoint-secret').waitFor()
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2)

    await page.getByRole('button', { name: `Remove endpoint ${second}` }).click()
    await page.getByRole('button', { name: `Yes, remove ${second}` }).waitFor()
    await accessible(page, 'endpoint removal confirmation')
    await table.getByRole('button', { name: 'Cancel' }).click()
    await page.reload()
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2)

    await page.getByRole('button', { name: `Remove endpoint ${second}` }).click()
    await page.getByRole('button', { name: `Yes, remove ${second}` }).click()
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1)
    await page.reload()
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1)
    expect(await table.getByText(second).count()).toBe(0)

    // The default endpoint: Remove webhook asks first; Cancel keeps it.
    await page.getByRole('button', { name: 'Remove webhook' }).click()
    await page.getByText(/Remove the webhook .*\?/).waitFor()
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.reload()
    await page.getByRole('button', { name: 'Remove webhook' }).waitFor()
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1)
  }, 120_000)

  it("edits another endpoint's URL, events and body, sends it a test event and shows its deliveries alone", async () => {
    const table = page.getByTestId('endpoints')
    const second = `${receiver.url}?other`
    const edited = `${receiver.url}?edited`
    await page.getByLabel('New endpoint URL').fill(second)
    await page.getByRole('group', { name: 'Events' }).first().getByLabel('test events').uncheck()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByTestId('endpoint-secret').waitFor()
    const row = table.locator('tbody tr').nth(1)
    await expect.poll(() => row.innerText()).toContain(second)
    expect(await row.locator('td').nth(1).innerText()).toBe('message.status')

    // Not subscribed to test events: refused inline, nothing queued.
    await page.getByRole('button', { name: `Send test to ${second}` }).click()
    await page.locator('#endpoint-error').getByText('not subscribed to test events').waitFor()

    // A bad URL is refused inline and changes nothing; Cancel closes the form.
    await page.getByRole('button', { name: `Edit endpoint ${second}` }).click()
    const url = page.getByLabel('Endpoint URL', { exact: true })
    // The form takes the focus once it has rendered, after the click resolves: wait for it.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('edit-endpoint-url')
    expect(await url.inputValue()).toBe(second)
    await url.fill('not a url')
    await page.getByRole('button', { name: 'Save endpoint' }).click()
    await page.locator('#edit-endpoint-error').getByText(/URL/i).waitFor()
    await atBothWidths(page, 'endpoint editing')
    await page.getByTestId('edit-endpoint').getByRole('button', { name: 'Cancel' }).click()
    await page.reload()
    await expect.poll(() => row.innerText()).toContain(second)

    // Saved: the new URL, both event types and the envelope.
    await page.getByRole('button', { name: `Edit endpoint ${second}` }).click()
    const form = page.getByTestId('edit-endpoint')
    await url.fill(edited)
    await form.getByLabel('test events').check()
    await form.getByLabel('Body').selectOption('STANDARD')
    await page.getByRole('button', { name: 'Save endpoint' }).click()
    await page.getByText(`Endpoint ${second} saved.`).waitFor()
    expect(await form.count()).toBe(0)
    await page.reload()
    await expect.poll(() => row.innerText()).toContain(edited)
    expect(await row.innerText()).toMatch(/message\.status, test[\s\S]*Standard Webhooks envelope/)

    // Its test event goes to it alone, in the envelope, and its deliveries can be shown alone.
    const count = receiver.received.length
    await page.getByRole('button', { name: `Send test to ${edited}` }).click()
    await page.getByText(`Test event queued for ${edited}.`).waitFor()
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(count + 1)
    const got = receiver.received.at(-1)!
    expect(JSON.parse(got.body)).toMatchObject({ type: 'test', data: { test: true } })
    await page.getByRole('button', { name: `Deliveries to ${edited}` }).click()
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('delivery-endpoint')
    const log = page.getByTestId('deliveries')
    await expect.poll(() => log.locator('tbody tr').count()).toBe(1)
    expect(await log.locator('tbody tr').getAttribute('data-delivery')).toBe(got.headers['webhook-id'])
    expect(await log.innerText()).toContain(`to ${edited}`)
    await page.getByLabel('To', { exact: true }).selectOption('')
    await expect.poll(() => log.locator('tbody tr').count()).toBeGreaterThan(1)
  }, 120_000)

  it('shows the account and looks up a delivery report; an unknown id is an inline error', async () => {
    await page.getByTestId('credit-balance').getByText('credits').waitFor()
    expect(await page.getByTestId('credit-balance').innerText()).toMatch(/^0(\.0+)? credits$/)
    await page.getByLabel('Delivery report by message id').fill('00000000-0000-4000-8000-000000000000')
    await page.getByRole('button', { name: 'Look up' }).click()
    await page
      .locator('#report-error')
      .getByText(/not found/i)
      .waitFor()
    expect(await page.getByTestId('report').count()).toBe(0)
  }, 30_000)

  it('reads at 1280 and 360 px: no sideways scrolling, every row action on screen, a skip link and a navigation shell, all by keyboard', async () => {
    await page.reload()
    const log = page.getByTestId('deliveries')
    await log.locator('tbody tr').first().waitFor()
    // Each table has a row with an action: a key to revoke, an endpoint to remove, deliveries to replay.
    await page.locator('tbody tr button', { hasText: 'Revoke' }).first().waitFor()
    await page.getByTestId('endpoints').locator('tbody tr button', { hasText: 'Remove' }).first().waitFor()
    await log.locator('tbody tr button', { hasText: 'Replay' }).first().waitFor()
    await atBothWidths(page, 'console')

    await page.setViewportSize({ width: 360, height: 740 })
    // Tab from the top reaches the webhook URL field without a mouse.
    await page.reload()
    await page.getByLabel('Webhook URL').waitFor()
    await page.locator('body').focus()
    let reached = false
    for (let i = 0; i < 80 && !reached; i++) {
      await page.keyboard.press('Tab')
      reached = await page.evaluate(() => document.activeElement?.id === 'webhook-url')
    }
    expect(reached).toBe(true)
    // The first Tab reaches the skip link, which moves focus past the header to the sections.
    await page.reload()
    await page.getByLabel('Webhook URL').waitFor()
    await page.locator('body').focus()
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the console')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('main')
    // The shell's links lead to each section.
    const nav = page.getByRole('navigation', { name: 'Console' })
    for (const [name, heading] of [
      ['Keys', 'keys-heading'],
      ['Webhooks', 'webhook-heading'],
      ['Deliveries', 'deliveries-heading'],
    ]) {
      await nav.getByRole('link', { name, exact: true }).click()
      await expect.poll(() => page.evaluate(() => location.hash)).toBe(`#${heading}`)
    }
    // docs/console-360.png is this screenshot: the delivery log's cards, one screen high.
    await page.screenshot({ path: join(SCREENSHOTS, `console-360-deliveries-${target.name}.png`) })
    await page.setViewportSize({ width: 1280, height: 900 })
  }, 120_000)

  it('signs out: the page shows how to sign in, and the old session is refused', async () => {
    const [cookie] = await context.cookies(base)
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content')
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.getByText('Open a sign-in link to use the console').waitFor()
    await atBothWidths(page, 'signed out')
    const answer = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `console_session=${cookie!.value}`, 'x-csrf-token': csrf!, origin: base },
      body: JSON.stringify({ query: '{ account { id } }' }),
    }).then((r) => r.json() as Promise<any>)
    expect(answer.errors[0].extensions.code).toBe('UNAUTHENTICATED')
    expect(pageErrors).toEqual([])
  }, 30_000)
})
