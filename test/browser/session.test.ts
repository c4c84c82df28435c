// The browser session and the unsent text seen from the app: logging out ends
// the session on the server; a session that expires while the user types
// keeps the draft through the login page and back; drafts go through the
// drafts API while the user's setting allows it, and stay in the browser
// only when it does not.
import t from 'tap'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { ROOT } from '../support/root.js'
import { freePort, givePassword, launchBrowser, openApp } from './browser.js'

const IDLE_SECONDS = 600

t.test('the session and drafts in the app', async (t) => {
  const port = await freePort()
  const { app, fx, services } = await buildTestApp(t, { config: { externalUrl: `http://localhost:${port}`, sessionIdleTimeoutSeconds: IDLE_SECONDS, sessionMaxAgeSeconds: 3 * IDLE_SECONDS } })
  await app.listen({ port, host: '127.0.0.1' })
  const realNow = services.now
  t.teardown(() => {
    services.now = realNow
  })
  const origin = `http://${fx.host}:${port}`
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const password = await givePassword(services, member)
  const general = fx.streams.general
  const browser = await launchBrowser(t)
  const shots = path.join(ROOT, 'dist/screenshots')
  mkdirSync(shots, { recursive: true })

  /** The status of GET /json/users/me made by the page with its cookies. */
  const ownStatus = (page: Page) => page.evaluate(async () => (await fetch('/json/users/me', { credentials: 'same-origin' })).status)
  const composeText = (page: Page) => page.locator('.compose textarea').inputValue()
  const serverDrafts = async () => (expectSuccess(t, await as(app, member).get('/drafts')).drafts as { id: number; type: string; to: number[]; topic: string; content: string }[])
  /** Waits until the member's drafts on the server satisfy `test` (they are saved a moment after typing stops). */
  const draftsUntil = async (test: (drafts: Awaited<ReturnType<typeof serverDrafts>>) => boolean) => {
    for (;;) {
      const drafts = await serverDrafts()
      if (test(drafts)) return drafts
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  t.test('"Log out" ends the session on the server and shows the login page', async (t) => {
    const { page } = await openApp(t, browser, origin, member, password)
    t.equal(await ownStatus(page), 200, 'logged in')
    await Promise.all([page.waitForURL(`${origin}/login`), page.getByRole('button', { name: 'Log out' }).click()])
    t.equal(await ownStatus(page), 401, 'the cookie no longer authenticates')
  })

  t.test('text typed in a topic is a draft on the server until it is sent', async (t) => {
    const { page, errors } = await openApp(t, browser, origin, member, password)
    await page.goto(`${origin}/#channel/${general.id}/topic/plans`)
    await page.fill('.compose textarea', 'the plan, half written')
    const [draft] = await draftsUntil((d) => d.some((x) => x.content === 'the plan, half written'))
    t.match(draft, { type: 'stream', to: [general.id], topic: 'plans', content: 'the plan, half written' })
    await page.locator('.compose textarea').press('End')
    await page.keyboard.type(' and finished')
    await draftsUntil((d) => d.length === 1 && d[0]!.id === draft!.id && d[0]!.content === 'the plan, half written and finished')
    t.pass('edited in place (PATCH), not a second draft')
    await page.keyboard.press('Enter')
    await page.locator('.message .content', { hasText: 'the plan, half written and finished' }).waitFor({ timeout: 10_000 })
    t.same(await draftsUntil((d) => d.length === 0), [], 'deleted once sent')
    t.same(errors, [])
  })

  t.test("a draft saved by another client opens in that conversation's compose box", async (t) => {
    expectSuccess(t, await as(app, member).post('/drafts', { drafts: [{ type: 'private', to: [other.id], topic: '', content: 'from my phone', timestamp: Math.floor(Date.now() / 1000) }] }))
    const { page, errors } = await openApp(t, browser, origin, member, password)
    await page.goto(`${origin}/#dm/${other.id}`)
    await page.waitForSelector('.compose textarea')
    t.equal(await composeText(page), 'from my phone')
    await page.locator('.compose textarea').press('Enter')
    await page.locator('.message .content', { hasText: 'from my phone' }).waitFor({ timeout: 10_000 })
    t.same(await draftsUntil((d) => d.length === 0), [], 'sending it deleted it')
    t.same(errors, [])
  })

  t.test('with draft synchronization off, the draft stays in the browser only', async (t) => {
    expectSuccess(t, await as(app, member).patch('/settings', { enable_drafts_synchronization: false }))
    t.teardown(async () => void (await as(app, member).patch('/settings', { enable_drafts_synchronization: true })))
    const { page, errors } = await openApp(t, browser, origin, member, password)
    await page.goto(`${origin}/#channel/${general.id}/topic/local`)
    await page.fill('.compose textarea', 'kept here only')
    // Leaving the view sends a pending draft at once; with the setting off there is none to send.
    await page.goto(`${origin}/#starred`)
    await page.waitForSelector('.messages')
    await page.reload()
    await page.goto(`${origin}/#channel/${general.id}/topic/local`)
    await page.waitForSelector('.compose textarea')
    t.equal(await composeText(page), 'kept here only', 'restored from this browser')
    t.equal(await services.prisma.draft.count({ where: { userId: member.id } }), 0, 'nothing on the server')
    await page.fill('.compose textarea', '')
    t.same(errors, [])
  })

  t.test('a session that expires while the user types keeps the draft through the login page and back', async (t) => {
    const { page, errors } = await openApp(t, browser, origin, member, password)
    const hash = `#channel/${general.id}/topic/expiry`
    await page.goto(`${origin}/${hash}`)
    // The draft's creation comes back as a drafts event; the app then holds its next poll.
    const drafted = page.waitForResponse(async (r) => r.url().includes('/json/events') && (await r.text()).includes('"drafts"'))
    const nextPoll = page.waitForRequest((r) => r.url().includes('/json/events') && !r.url().includes('last_event_id=-1') && !r.url().includes('last_event_id=0'))
    await page.fill('.compose textarea', 'written before')
    await drafted
    await nextPoll
    // A request made after the poll's is answered after it (one database connection): the poll is authenticated and held.
    t.equal(await ownStatus(page), 200)
    // The session's idle lifetime passes; the user goes on typing, and the app's next request is refused.
    services.now = () => new Date(realNow().getTime() + (IDLE_SECONDS + 60) * 1000)
    await Promise.all([page.waitForURL(/\/login\?next=/, { timeout: 20_000 }), page.fill('.compose textarea', 'written before and after the session ended')])
    await page.screenshot({ path: path.join(shots, 'session-expired.png') })
    t.equal(await ownStatus(page), 401, 'the session has ended')
    await page.fill('#username', member.deliveryEmail)
    await page.fill('#password', password)
    await Promise.all([page.waitForURL(`${origin}/${hash}`), page.click('#submit')])
    await page.waitForSelector('.compose textarea')
    t.equal(await composeText(page), 'written before and after the session ended', 'back in the same view with the whole draft')
    await page.screenshot({ path: path.join(shots, 'session-draft-restored.png') })
    await page.locator('.compose textarea').press('Enter')
    await page.locator('.message .content', { hasText: 'written before and after the session ended' }).waitFor({ timeout: 10_000 })
    t.same(await draftsUntil((d) => d.length === 0), [], 'the draft is gone once sent')
    t.same(errors, [])
  })
})
