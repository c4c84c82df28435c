// A topic of thousands of messages in the app: scrolling from the newest to
// the first and back keeps the page at a bounded number of rows (the list is
// windowed), the message on screen stays where it is while older rows and
// pages are added above it, and a new message still shows at the bottom. A
// link to a message in the middle opens the topic at that message, and
// scrolling down from there loads the newer pages.
import t from 'tap'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { sendBotMessages } from '../../src/actions/send-bot-messages.js'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { ROOT } from '../support/root.js'
import { freePort, givePassword, launchBrowser, openApp, seriousViolations } from './browser.js'

/** How many messages the topic holds: many pages (the app fetches 100 at a time) and far more than the window. */
const MESSAGES = 2000
/** The most rows the message list keeps in the page (docs/web-client.md). */
const WINDOW = 150

/** Counts rows on every animation frame until stopped; returns the most seen at once. */
async function watchRows(page: Page): Promise<() => Promise<number>> {
  await page.evaluate(() => {
    const w = window as unknown as { __rows: { most: number; on: boolean } }
    w.__rows = { most: 0, on: true }
    const count = () => {
      w.__rows.most = Math.max(w.__rows.most, document.querySelectorAll('.messages [data-id]').length)
      if (w.__rows.on) requestAnimationFrame(count)
    }
    requestAnimationFrame(count)
  })
  return () =>
    page.evaluate(() => {
      const w = window as unknown as { __rows: { most: number; on: boolean } }
      w.__rows.on = false
      return w.__rows.most
    })
}

t.test('a topic of thousands of messages', async (t) => {
  const port = await freePort()
  const { app, fx, services } = await buildTestApp(t, { config: { externalUrl: `http://localhost:${port}` } })
  await app.listen({ port, host: '127.0.0.1' })
  const origin = `http://${fx.host}:${port}`
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const general = fx.streams.general
  // Sent as a client's POST /messages would be, but a batch in a few statements (the notification bot's way), so that the
  // fixture takes seconds: the subject here is the app.
  const ctx = { ...services, realm: fx.realm, log: app.log, clientName: 'test', user: other }
  const ids: number[] = []
  for (let from = 0; from < MESSAGES; from += 500) {
    const batch = Array.from({ length: Math.min(500, MESSAGES - from) }, (_, i) => {
      const n = from + i
      // Some messages several paragraphs long: rows of different heights.
      const content = n % 5 === 0 ? `long ${n}\n\n${'a line of text\n\n'.repeat(n % 4)}` : `long ${n}`
      return { kind: 'stream' as const, streamId: general.id, topic: 'long', content }
    })
    ids.push(...(await sendBotMessages(ctx, batch)))
  }
  expectSuccess(t, await as(app, member).post('/mark_all_as_read'))
  const browser = await launchBrowser(t)
  const ann = await openApp(t, browser, origin, member, await givePassword(services, member))
  const { page } = ann
  await page.goto(`${origin}/#channel/${general.id}/topic/long`)
  const last = MESSAGES - 1
  await page.locator('.message .content', { hasText: new RegExp(`^long ${MESSAGES - 1}$`) }).waitFor({ timeout: 20_000 })
  t.pass(`opened at the newest message (long ${last}), all being read`)

  t.test('the message on screen stays put while rows and older pages are added above it', async (t) => {
    // Jumps to the top of what is rendered: each time the list adds rows above, frame by frame, fetching pages as it goes.
    for (let round = 0; round < 5; round++) {
      const first = await page.evaluate(() => {
        const el = document.querySelector('.messages') as HTMLElement
        el.scrollTop = 0
        el.dispatchEvent(new Event('scroll'))
        const top = el.getBoundingClientRect().top
        const row = [...el.querySelectorAll<HTMLElement>('[data-id]')].find((r) => r.getBoundingClientRect().bottom > top)!
        return { id: row.dataset.id!, y: row.getBoundingClientRect().top }
      })
      await page.waitForFunction(() => (document.querySelector('.messages') as HTMLElement).scrollTop > 500, undefined, { polling: 'raf', timeout: 20_000 })
      const now = await page.evaluate((id) => document.querySelector<HTMLElement>(`.messages [data-id="${id}"]`)?.getBoundingClientRect().top, first.id)
      t.ok(now !== undefined && Math.abs(now - first.y) <= 1, `message ${first.id} stays at ${first.y} px (now ${now})`)
    }
    // The first page held the newest 51: the rows above came from pages fetched meanwhile.
    t.ok((await page.locator('.messages [data-id]').count()) > 51, 'older pages were added')
  })

  t.test('scrolling up to the first message keeps a bounded number of rows in the page', async (t) => {
    const most = await watchRows(page)
    await page.waitForFunction(
      () => {
        const el = document.querySelector('.messages') as HTMLElement
        el.scrollTop = Math.max(0, el.scrollTop - 800)
        el.dispatchEvent(new Event('scroll'))
        return [...document.querySelectorAll('.message .content')].some((c) => c.textContent?.trim() === 'long 0')
      },
      undefined,
      { polling: 'raf', timeout: 120_000 },
    )
    t.pass('the first message of the topic is reached')
    const dir = path.join(ROOT, 'dist/screenshots')
    mkdirSync(dir, { recursive: true })
    await page.screenshot({ path: path.join(dir, 'long-topic-start.png') })
    const seen = await most()
    t.ok(seen > 0 && seen <= WINDOW, `at most ${WINDOW} rows in the page at any frame (${seen}), with ${MESSAGES} messages loaded`)
    t.ok((await page.locator('.messages [data-id]').count()) <= WINDOW)
  })

  t.test('scrolling back down to the newest keeps the bound, and a new message shows at the bottom', async (t) => {
    const most = await watchRows(page)
    await page.waitForFunction(
      (last) => {
        const el = document.querySelector('.messages') as HTMLElement
        el.scrollTop = el.scrollTop + 800
        el.dispatchEvent(new Event('scroll'))
        return [...document.querySelectorAll('.message .content')].some((c) => c.textContent?.trim() === `long ${last}`)
      },
      last,
      { polling: 'raf', timeout: 120_000 },
    )
    // At the very bottom: a new message is followed.
    await page.waitForFunction(() => {
      const el = document.querySelector('.messages') as HTMLElement
      el.scrollTop = el.scrollHeight
      el.dispatchEvent(new Event('scroll'))
      return el.scrollHeight - el.scrollTop - el.clientHeight < 2
    }, undefined, { polling: 'raf', timeout: 20_000 })
    expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'long', content: 'the newest of all' }))
    const newest = page.locator('.message .content', { hasText: 'the newest of all' })
    await newest.waitFor({ timeout: 20_000 })
    t.ok(await newest.isVisible(), 'shown in the view')
    const seen = await most()
    t.ok(seen > 0 && seen <= WINDOW, `at most ${WINDOW} rows in the page at any frame (${seen})`)
  })

  t.test('a link to a message in the middle opens the topic at it, and newer pages load below it', async (t) => {
    const topicHash = `#channel/${general.id}/topic/long`
    t.equal(await page.locator(`.messages [data-id="${ids[last]}"] a.time`).getAttribute('href'), `${topicHash}/near/${ids[last]}`, "a message's time links to it in its conversation")
    const middle = ids[1000]!
    const inView = async (id: number) =>
      page.evaluate((id) => {
        const row = document.querySelector<HTMLElement>(`.messages [data-id="${id}"]`)
        const box = document.querySelector('.messages')!.getBoundingClientRect()
        const r = row?.getBoundingClientRect()
        return r !== undefined && r.top >= box.top && r.bottom <= box.bottom && document.activeElement === row && row?.classList.contains('linked') === true
      }, id)
    // The address changes as a click on the link would change it.
    await page.evaluate((hash) => (location.hash = hash), `${topicHash}/near/${middle}`)
    await page.locator(`.messages [data-id="${middle}"]`).waitFor({ timeout: 20_000 })
    await page.waitForFunction(() => document.activeElement?.matches('.messages [data-id]'), undefined, { timeout: 5_000 })
    t.ok(await inView(middle), `message ${middle} (long 1000) is in view, focused and highlighted`)
    t.equal(await page.locator('.link-notice').count(), 0, 'no notice')
    await page.screenshot({ path: path.join(ROOT, 'dist/screenshots/message-link.png') })
    // j moves on from the linked message.
    await page.keyboard.press('j')
    t.equal(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id), String(ids[1001]), 'j goes to the next message')
    // Down to long 1200: past the first page (50 after the linked message), so newer pages come by scrolling.
    await page.waitForFunction(
      () => {
        const el = document.querySelector('.messages') as HTMLElement
        el.scrollTop = el.scrollTop + 800
        el.dispatchEvent(new Event('scroll'))
        return [...document.querySelectorAll('.message .content')].some((c) => c.textContent?.trim() === 'long 1200')
      },
      undefined,
      { polling: 'raf', timeout: 60_000 },
    )
    t.pass('scrolling down loads the newer pages')
    t.ok((await page.locator('.messages [data-id]').count()) <= WINDOW, 'within the window')

    // A permalink that follows its message: the topic named in it is wrong, the message's own topic opens.
    await page.evaluate((hash) => (location.hash = hash), `#channel/${general.id}/topic/elsewhere/with/${ids[500]}`)
    await page.waitForFunction((id) => document.activeElement?.matches(`.messages [data-id="${id}"]`), ids[500], { timeout: 20_000 })
    t.equal(await page.evaluate(() => location.hash), `${topicHash}/with/${ids[500]}`, 'with/ID: the address becomes the topic the message is in')
    t.ok(await inView(ids[500]!), 'and the message is in view')

    // The search box's near: operator.
    await page.evaluate((hash) => (location.hash = hash), `#search/${encodeURIComponent(`topic:long near:${ids[1500]}`)}`)
    await page.waitForFunction((id) => document.activeElement?.matches(`.messages [data-id="${id}"]`), ids[1500], { timeout: 20_000 })
    t.ok(await inView(ids[1500]!), 'near: in a search opens the search at the message')

    // A message that is not in the conversation: the conversation, with a notice.
    const dm = expectSuccess(t, await as(app, other).post('/messages', { type: 'direct', to: JSON.stringify([other.id]), content: 'not for ann' })).id as number
    await page.evaluate((hash) => (location.hash = hash), `${topicHash}/near/${dm}`)
    await page.locator('.link-notice', { hasText: 'The linked message is not in this conversation' }).waitFor({ timeout: 20_000 })
    t.pass('a message the user cannot see: the topic opens with a notice')
    await page.screenshot({ path: path.join(ROOT, 'dist/screenshots/message-link-missing.png') })
    t.same(await seriousViolations(page), [], 'no serious accessibility violation with the notice')
  })

  t.test('no uncaught error in the page', async (t) => {
    t.same(ann.errors, [])
  })
})
