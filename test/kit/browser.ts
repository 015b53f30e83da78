// What the browser tests share: Debian's chromium, headless, and the rule that only this machine
// may be reached (a page that needs the internet fails here).
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import type { Page } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
export const SCREENSHOTS = resolve('test-results/screenshots')
/** The hosts a page may reach. */
export const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost'])

/** Developers without chromium may skip; CI may not (there a missing browser fails the launch). */
export const skipBrowserTests = !existsSync(CHROMIUM) && !process.env.CI

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/**
 * axe-core's serious and critical violations on the page as it stands (evaluated over CDP, which
 * the page's CSP does not govern): `[]` when it passes.
 */
export async function seriousAxeViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  await page.evaluate(AXE)
  return page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] })
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n: any) => n.target.join(' ')) }))
  })
}
