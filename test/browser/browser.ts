// The browser tests' Chromium (Debian's package, driven by playwright-core)
// and the app opened as a user. One browser per test file; each user gets a
// context of their own (own cookies, own storage).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import type { Test } from 'tap'
import type { User } from '../../src/db/index.js'

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
  '--host-resolver-rules=MAP *.localhost 127.0.0.1',
]

/** Chromium (playwright-core gives every launch a fresh temporary profile), closed at the end of `t`. */
export async function launchBrowser(t: Test): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  return browser
}

/**
 * Opens the app at `origin` as `user` in a new context. The browser
 * session's login page is another module's: until a session exists for
 * the user the test authenticates the context's /json calls itself
 * (loginAs below), never through the shipped app.
 */
export async function openApp(t: Test, browser: Browser, origin: string, user: Pick<User, 'deliveryEmail' | 'apiKey'>, viewport = { width: 1200, height: 800 }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport })
  t.teardown(() => context.close().catch(() => undefined))
  await loginAs(context, origin, user)
  const page = await context.newPage()
  const errors: string[] = []
  // Uncaught errors of the page: each test file asserts at its end that there were none.
  page.on('pageerror', (e) => errors.push(String(e)))
  await page.goto(`${origin}/`)
  await page.waitForSelector('nav#nav', { state: 'attached' })
  return { context, page, errors }
}

/** /json/* answered by /api/v1/* with the user's credentials (test-only stand-in for the session cookie). */
export async function loginAs(context: BrowserContext, origin: string, user: Pick<User, 'deliveryEmail' | 'apiKey'>): Promise<void> {
  const authorization = `Basic ${Buffer.from(`${user.deliveryEmail}:${user.apiKey}`).toString('base64')}`
  await context.route(`${origin}/json/**`, (route) => {
    const url = route.request().url().replace(`${origin}/json/`, `${origin}/api/v1/`)
    return route.continue({ url, headers: { ...route.request().headers(), authorization } })
  })
}

const require = createRequire(import.meta.url)
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's violations of impact serious or critical on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP (rightly) refuses an inline script.
  await page.evaluate(AXE)
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> } }).axe
    const result = await axe.run(document, { resultTypes: ['violations'] })
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
  })
  return found
}
