// What the browser tests share: Debian's chromium, headless, and the rule that only this machine
// may be reached (a page that needs the internet fails here).
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'

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
