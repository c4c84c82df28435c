// The browser tests' Chromium (Debian's package, driven by playwright-core)
// and the app opened as a user. One browser per test file; each user gets a
// context of their own (own cookies, own storage).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer, type AddressInfo } from 'node:net'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import type { Test } from 'tap'
import type { User } from '../../src/db/index.js'
import type { Services } from '../../src/services.js'
import { hashPassword } from '../../src/domain/credentials.js'

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

/** A TCP port free on 127.0.0.1 now, so a server can be told its own address (EXTERNAL_URL) before it listens. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** Gives `user` a password (the fixture's people have none) and returns it. */
export async function givePassword(services: Services, user: Pick<User, 'id'>): Promise<string> {
  const password = `browser-${user.id}-password`
  await services.prisma.user.update({ where: { id: user.id }, data: { passwordHash: await hashPassword(password) } })
  return password
}

/**
 * Opens the app at `origin` as `user` in a new context, logging in through
 * the real login page (`/login`: the session and CSRF cookies, then the
 * redirect to the app), as a person would.
 */
export async function openApp(t: Test, browser: Browser, origin: string, user: Pick<User, 'deliveryEmail'>, password: string, viewport = { width: 1200, height: 800 }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport })
  t.teardown(() => context.close().catch(() => undefined))
  const page = await context.newPage()
  const errors: string[] = []
  // Uncaught errors of the page: each test file asserts at its end that there were none.
  page.on('pageerror', (e) => errors.push(String(e)))
  await logIn(page, origin, user, password)
  return { context, page, errors }
}

/** Fills and submits the login page, then waits for the app's navigation. */
export async function logIn(page: Page, origin: string, user: Pick<User, 'deliveryEmail'>, password: string): Promise<void> {
  await page.goto(`${origin}/login`)
  await page.fill('#username', user.deliveryEmail)
  await page.fill('#password', password)
  await Promise.all([page.waitForURL(`${origin}/`), page.click('#submit')])
  await page.waitForSelector('nav#nav', { state: 'attached' })
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
