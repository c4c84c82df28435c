// The views that are not message lists, clicked through in Chromium against
// a Roost node: recent conversations (one row per topic and direct
// conversation, newest first, unread counts, filters, muted rows, live rows,
// rows after deletions, a row opens its conversation), the drafts list
// (restore into the compose box, delete), and the navigation's old topics and
// direct conversations. Screenshots of both for the
// documentation.
import t from 'tap'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { sendBotMessages } from '../../src/actions/send-bot-messages.js'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { eventually } from '../support/eventually.js'
import { expectSuccess } from '../support/expect.js'
import { ROOT } from '../support/root.js'
import { FLAG_BITS } from '../../src/domain/flags.js'
import { freePort, givePassword, launchBrowser, openApp, seriousViolations } from './browser.js'

t.test('recent conversations and drafts', async (t) => {
  const port = await freePort()
  const { app, fx, services } = await buildTestApp(t, { config: { externalUrl: `http://localhost:${port}` } })
  await app.listen({ port, host: '127.0.0.1' })
  const origin = `http://${fx.host}:${port}`
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const admin = await fx.user('admin')
  const { general, design } = fx.streams
  const browser = await launchBrowser(t)
  const shots = path.join(ROOT, 'dist/screenshots')
  mkdirSync(shots, { recursive: true })
  const send = async (from: typeof member, params: Record<string, unknown>) => expectSuccess(t, await as(app, from).post('/messages', params)).id as number
  const topicHash = (streamId: number, topic: string) => `#channel/${streamId}/topic/${encodeURIComponent(topic)}`
  /** The rows of the recent conversations view, top to bottom: [address, unread count]. */
  const rows = (page: Page) =>
    page.$$eval('.recent tbody tr', (trs) => trs.map((tr) => [tr.getAttribute('data-conversation') ?? '', tr.querySelector('.count')?.textContent ?? '']))

  const { page, errors } = await openApp(t, browser, origin, member, await givePassword(services, member))
  // On a view that reads nothing (the app's home view marks what it shows read).
  await page.goto(`${origin}/#starred`)
  await page.waitForSelector('.messages')
  await send(other, { type: 'stream', to: general.id, topic: 'alpha', content: 'first in alpha' })
  // Sent through the API, the member's own message arrives unread (upstream's rule for non-browser clients): read it.
  const mine = await send(member, { type: 'stream', to: design.id, topic: 'beta', content: 'mine in beta' })
  expectSuccess(t, await as(app, member).post('/messages/flags', { messages: JSON.stringify([mine]), op: 'add', flag: 'read' }))
  await send(other, { type: 'stream', to: general.id, topic: 'alpha', content: 'second in alpha' })
  await send(other, { type: 'direct', to: JSON.stringify([member.id]), content: 'a direct word' })

  t.test('one row per conversation, newest first, with unread counts', async (t) => {
    await page.getByRole('link', { name: 'Recent conversations' }).click()
    t.match(page.url(), /#recent$/)
    await page.locator('.recent tbody tr').nth(2).waitFor({ timeout: 10_000 })
    t.same(await rows(page), [
      [`#dm/${other.id}`, '1'],
      [topicHash(general.id, 'alpha'), '2'],
      [topicHash(design.id, 'beta'), ''],
    ])
    t.equal(await page.locator(`.recent tr[data-conversation="#dm/${other.id}"] .conversation`).textContent(), other.fullName)
    t.match(await page.locator(`.recent tr[data-conversation="${topicHash(general.id, 'alpha')}"]`).textContent(), /#general.*alpha.*Otto Other/s)
    t.same(await seriousViolations(page), [], 'axe-core: no serious or critical violation')
  })

  t.test('filters: unread only, one channel, direct messages', async (t) => {
    await page.getByLabel('Unread only').check()
    t.same((await rows(page)).map((r) => r[0]), [`#dm/${other.id}`, topicHash(general.id, 'alpha')])
    await page.getByLabel('Unread only').uncheck()
    await page.getByLabel('Show').selectOption({ label: '#design' })
    t.same((await rows(page)).map((r) => r[0]), [topicHash(design.id, 'beta')])
    await page.getByLabel('Show').selectOption({ label: 'Direct messages' })
    t.same((await rows(page)).map((r) => r[0]), [`#dm/${other.id}`])
    await page.getByLabel('Show').selectOption({ label: 'All conversations' })
    t.equal((await rows(page)).length, 3)
  })

  t.test('filters: participated, include muted; muted rows marked', async (t) => {
    const row = (hash: string) => page.locator(`.recent tr[data-conversation="${hash}"]`)
    await page.getByLabel('Participated').check()
    t.same((await rows(page)).map((r) => r[0]), [topicHash(design.id, 'beta')], 'only where the user wrote')
    await page.getByLabel('Participated').uncheck()
    // A topic the member mutes goes; included, it comes back marked.
    await send(other, { type: 'stream', to: general.id, topic: 'hushed', content: 'quiet please' })
    await row(topicHash(general.id, 'hushed')).waitFor({ timeout: 10_000 })
    expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: general.id, topic: 'hushed', visibility_policy: 1 }))
    await row(topicHash(general.id, 'hushed')).waitFor({ state: 'detached', timeout: 10_000 })
    await page.getByLabel('Include muted').focus()
    await page.keyboard.press('Space')
    t.ok(await page.getByLabel('Include muted').isChecked(), 'the filter works from the keyboard')
    t.equal(await row(topicHash(general.id, 'hushed')).locator('.muted-mark').textContent(), 'Muted', 'a muted topic, marked')
    t.match(await row(topicHash(general.id, 'hushed')).getAttribute('class'), /\bmuted\b/)
    // A muted channel: its topics are muted rows, except one the member unmutes.
    const muteDesign = (value: boolean) => as(app, member).post('/users/me/subscriptions/properties', { subscription_data: JSON.stringify([{ stream_id: design.id, property: 'is_muted', value }]) })
    expectSuccess(t, await muteDesign(true))
    await row(topicHash(design.id, 'beta')).locator('.muted-mark').waitFor({ timeout: 10_000 })
    t.same(await seriousViolations(page), [], 'axe-core: no serious or critical violation with muted rows')
    await page.screenshot({ path: path.join(shots, 'recent-conversations-muted.png') })
    await page.getByLabel('Include muted').uncheck()
    t.same((await rows(page)).map((r) => r[0]), [`#dm/${other.id}`, topicHash(general.id, 'alpha')], "the muted channel's topics and the muted topic are left out")
    expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: design.id, topic: 'beta', visibility_policy: 2 }))
    await row(topicHash(design.id, 'beta')).waitFor({ timeout: 10_000 })
    t.equal(await row(topicHash(design.id, 'beta')).locator('.muted-mark').count(), 0, 'a topic unmuted in a muted channel is shown, unmarked')
    expectSuccess(t, await muteDesign(false))
    expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: design.id, topic: 'beta', visibility_policy: 0 }))
    t.equal((await rows(page)).length, 3)
  })

  t.test('a new message moves its conversation to the top, live', async (t) => {
    await send(other, { type: 'stream', to: design.id, topic: 'gamma', content: 'news in gamma' })
    await page.waitForFunction((hash) => document.querySelector('.recent tbody tr')?.getAttribute('data-conversation') === hash, topicHash(design.id, 'gamma'), { timeout: 10_000 })
    t.same((await rows(page))[0], [topicHash(design.id, 'gamma'), '1'])
    await send(other, { type: 'stream', to: general.id, topic: 'alpha', content: 'third in alpha' })
    await page.waitForFunction((hash) => document.querySelector('.recent tbody tr')?.getAttribute('data-conversation') === hash, topicHash(general.id, 'alpha'), { timeout: 10_000 })
    t.same((await rows(page))[0], [topicHash(general.id, 'alpha'), '3'])
    await page.screenshot({ path: path.join(shots, 'recent-conversations.png') })
  })

  t.test("clicking a row opens its conversation; read, its count goes", async (t) => {
    await page.bringToFront()
    await page.locator(`.recent tr[data-conversation="${topicHash(general.id, 'alpha')}"] .conversation`).click()
    t.match(page.url(), new RegExp(`${topicHash(general.id, 'alpha')}$`))
    await page.locator('.message .content', { hasText: 'third in alpha' }).waitFor({ timeout: 10_000 })
    await page.locator(`nav a[href="${topicHash(general.id, 'alpha')}"] .count`).waitFor({ state: 'detached', timeout: 10_000 })
    await page.getByRole('link', { name: 'Recent conversations' }).click()
    await page.locator(`.recent tr[data-conversation="${topicHash(general.id, 'alpha')}"]`).waitFor()
    t.equal(await page.locator(`.recent tr[data-conversation="${topicHash(general.id, 'alpha')}"] .count`).count(), 0, 'no unread count on the row')
    await page.locator(`.recent tr[data-conversation="#dm/${other.id}"] .conversation`).click()
    await page.locator('.message .content', { hasText: 'a direct word' }).waitFor({ timeout: 10_000 })
    t.match(page.url(), new RegExp(`#dm/${other.id}$`))
  })

  const serverDrafts = async () => (await services.prisma.draft.findMany({ where: { userId: member.id }, orderBy: { id: 'asc' } })).map((d) => ({ id: d.id, content: d.content }))

  t.test('the drafts list: restore into the compose box, delete', async (t) => {
    const now = Math.floor(Date.now() / 1000)
    expectSuccess(t, await as(app, member).post('/drafts', { drafts: [{ type: 'stream', to: [general.id], topic: 'plans', content: 'the plan from my phone', timestamp: now - 60 }] }))
    // One typed in this browser, saved to the server a moment after typing stops.
    await page.goto(`${origin}/#dm/${other.id}`)
    await page.fill('.compose textarea', 'a reply half written')
    for (;;) {
      if ((await serverDrafts()).some((d) => d.content === 'a reply half written')) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await page.getByRole('link', { name: /^Drafts/ }).click()
    t.match(page.url(), /#drafts$/)
    const list = page.locator('.draft-list .draft')
    await list.nth(1).waitFor({ timeout: 10_000 })
    t.same(await list.locator('strong').allTextContents(), [other.fullName, '#general › plans'], 'newest first, with their destinations')
    t.equal(await page.locator('nav .draft-count').textContent(), '2', 'the navigation counts them')
    t.same(await seriousViolations(page), [], 'axe-core: no serious or critical violation')
    await page.screenshot({ path: path.join(shots, 'drafts.png') })

    await page.getByRole('listitem', { name: 'Draft to #general › plans' }).getByRole('button', { name: 'Restore' }).click()
    await page.waitForURL(`${origin}/${topicHash(general.id, 'plans')}`)
    await page.waitForSelector('.compose textarea')
    t.equal(await page.locator('.compose textarea').inputValue(), 'the plan from my phone', 'in the compose box of its topic')
    t.ok(await page.locator('.compose textarea').evaluate((el) => el === document.activeElement), 'focused')
    await page.keyboard.type(' and more')
    for (;;) {
      const drafts = await serverDrafts()
      if (drafts.some((d) => d.content === 'the plan from my phone and more')) {
        t.equal(drafts.length, 2, 'typing edits the same draft')
        break
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }

    await page.getByRole('link', { name: /^Drafts/ }).click()
    await page.getByRole('listitem', { name: `Draft to ${other.fullName}` }).getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('listitem', { name: `Draft to ${other.fullName}` }).waitFor({ state: 'detached', timeout: 10_000 })
    t.same((await serverDrafts()).map((d) => d.content), ['the plan from my phone and more'], 'deleted on the server')
    await page.goto(`${origin}/#dm/${other.id}`)
    await page.waitForSelector('.compose textarea')
    t.equal(await page.locator('.compose textarea').inputValue(), '', 'and no longer in its compose box')
  })

  t.test('scheduled messages: sent later from the compose box, listed, rescheduled, edited in the compose box, cancelled', async (t) => {
    const scheduled = async () => expectSuccess(t, await as(app, member).get('/scheduled_messages')).scheduled_messages as { scheduled_message_id: number; content: string; scheduled_delivery_timestamp: number }[]
    // A datetime-local value in the page's time zone, and the UNIX time it stands for.
    const inDays = (days: number) => page.evaluate((days) => {
      const d = new Date(Date.now() + days * 86_400_000)
      d.setSeconds(0, 0)
      const p = (n: number) => String(n).padStart(2, '0')
      return { value: `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`, at: d.getTime() / 1000 }
    }, days)
    await page.goto(`${origin}/${topicHash(general.id, 'later')}`)
    await page.fill('.compose textarea', 'see you tomorrow')
    const tomorrow = await inDays(1)
    await page.getByLabel('Send at').fill(tomorrow.value)
    await page.getByRole('button', { name: 'Send later' }).click()
    const count = page.locator('nav .scheduled-count')
    await eventually('the navigation counts it', () => count.textContent({ timeout: 1_000 }), { until: (text) => text === '1' })
    t.match(await scheduled(), [{ content: 'see you tomorrow', scheduled_delivery_timestamp: tomorrow.at }], 'scheduled on the server')
    t.equal(await page.locator('.compose textarea').inputValue(), '', 'the compose box is emptied')

    await page.getByRole('link', { name: /^Scheduled messages/ }).click()
    const item = page.getByRole('listitem', { name: 'Scheduled message to #general › later' })
    await item.waitFor({ timeout: 10_000 })
    t.match(await item.textContent(), /see you tomorrow/, 'listed with its text')
    t.match(await item.locator('.time').textContent(), /^Will be sent /, 'and its time')
    t.same(await seriousViolations(page), [], 'axe-core: no serious or critical violation')
    await page.screenshot({ path: path.join(shots, 'scheduled-messages.png') })

    const later = await inDays(2)
    await item.getByRole('button', { name: 'Reschedule' }).click()
    await item.getByLabel('New time').fill(later.value)
    await item.getByRole('button', { name: 'Save' }).click()
    await eventually('rescheduled on the server', scheduled, { until: (list) => list[0]?.scheduled_delivery_timestamp === later.at })
    t.pass('rescheduled')

    await item.getByRole('button', { name: 'Edit' }).click()
    await page.waitForURL(`${origin}/${topicHash(general.id, 'later')}`)
    const box = page.locator('.compose textarea')
    t.equal(await box.inputValue(), 'see you tomorrow', 'in the compose box of its topic')
    t.equal(await page.getByLabel('Send at').inputValue(), later.value, 'with its time')
    await box.press('End')
    await page.keyboard.type(', at noon')
    await page.getByRole('button', { name: 'Save scheduled message' }).click()
    const edited = await eventually('the edit saved', scheduled, { until: (list) => list[0]?.content === 'see you tomorrow, at noon' })
    t.equal(edited.length, 1, 'the same scheduled message, edited in place')
    t.equal(edited[0]!.scheduled_delivery_timestamp, later.at, 'at the same time')

    await page.getByRole('link', { name: /^Scheduled messages/ }).click()
    await item.getByRole('button', { name: 'Cancel' }).click()
    await item.waitFor({ state: 'detached', timeout: 10_000 })
    t.same(await scheduled(), [], 'cancelled on the server')
    t.equal(await count.count(), 0, 'no count left')
  })

  t.test("the app's address alone opens the home view: recent conversations, or all messages when the user chose so", async (t) => {
    t.teardown(async () => void (await as(app, member).patch('/settings', { web_home_view: 'inbox' })))
    await page.goto(`${origin}/`)
    await page.locator('.recent tbody tr').first().waitFor({ timeout: 10_000 })
    t.equal(await page.locator('nav a[aria-current="page"]').textContent(), 'Recent conversations', 'the default (web_home_view inbox)')
    await page.getByRole('button', { name: 'Settings' }).click()
    await page.getByRole('dialog', { name: 'Settings' }).getByLabel('Home view').selectOption({ label: 'All messages' })
    for (;;) {
      if ((await services.prisma.userSettings.findUniqueOrThrow({ where: { userId: member.id } })).webHomeView === 'all_messages') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await page.goto(`${origin}/`)
    await page.waitForSelector('.messages .message')
    t.equal(await page.locator('.recent').count(), 0)
    t.match(await page.locator('nav a[aria-current="page"]').textContent(), /^All messages/)
  })

  t.test('on a 360 px wide phone both views fit the screen', async (t) => {
    const phone = await openApp(t, browser, origin, member, await givePassword(services, member), { width: 360, height: 740 })
    for (const hash of ['#recent', '#drafts']) {
      await phone.page.goto(`${origin}/${hash}`)
      await phone.page.waitForSelector(hash === '#recent' ? '.recent tbody tr' : '.draft-list .draft')
      t.ok(await phone.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${hash}: no sideways scrolling`)
    }
    await phone.page.goto(`${origin}/#recent`)
    await phone.page.waitForSelector('.recent tbody tr')
    await phone.page.screenshot({ path: path.join(shots, 'recent-conversations-phone.png') })
    await phone.page.getByLabel('Include muted').check()
    await phone.page.locator('.recent .muted-mark').first().waitFor()
    t.ok(await phone.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'muted rows included: no sideways scrolling')
    await phone.page.screenshot({ path: path.join(shots, 'recent-conversations-phone-muted.png') })
    t.same(phone.errors, [])
  })

  t.test("deleting a conversation's newest message: the row falls back to the newest left, and goes with the last", async (t) => {
    const row = (hash: string) => page.locator(`.recent tr[data-conversation="${hash}"]`)
    // The row's <time>: the message's timestamp (whole seconds, as the API gives it).
    const timeOf = async (id: number) => new Date(Math.floor((await services.prisma.message.findUniqueOrThrow({ where: { id } })).dateSent.getTime() / 1000) * 1000).toISOString()
    const remove = async (id: number) => void expectSuccess(t, await as(app, admin).delete(`/messages/${id}`))
    // A direct conversation known only from recent_private_conversations: more than the view's first page (400) is newer.
    const older = await send(admin, { type: 'direct', to: JSON.stringify([member.id]), content: 'an old word' })
    const newest = await send(admin, { type: 'direct', to: JSON.stringify([member.id]), content: 'a later word' })
    const ctx = { ...services, realm: fx.realm, log: app.log, clientName: 'test', user: other }
    await sendBotMessages(ctx, Array.from({ length: 400 }, (_, i) => ({ kind: 'stream' as const, streamId: general.id, topic: 'flood', content: `flood ${i}` })))
    await page.goto(`${origin}/#recent`)
    await page.reload()
    await row(topicHash(general.id, 'flood')).waitFor({ timeout: 10_000 })
    const dm = row(`#dm/${admin.id}`)
    t.equal(await dm.locator('time').count(), 0, 'its messages are not loaded')

    const first = await send(other, { type: 'stream', to: general.id, topic: 'delta', content: 'first in delta' })
    const mine = await send(member, { type: 'stream', to: general.id, topic: 'delta', content: 'mine in delta' })
    const delta = row(topicHash(general.id, 'delta'))
    await eventually('the topic row with both senders', async () => (await delta.locator('.senders').textContent()) === `you, ${other.fullName}`)
    await page.getByLabel('Participated').check()
    await remove(mine)
    await delta.waitFor({ state: 'detached', timeout: 10_000 })
    t.pass('with its newest message, the member no longer took part')
    await page.getByLabel('Participated').uncheck()
    t.equal(await delta.locator('.senders').textContent(), other.fullName, 'the senders of the messages left')
    t.equal(await delta.locator('time').getAttribute('datetime'), await timeOf(first), 'the time of the newest message left')
    await remove(first)
    await delta.waitFor({ state: 'detached', timeout: 10_000 })
    t.pass('the last message gone, the row goes')

    await remove(newest)
    await dm.locator('time').waitFor({ timeout: 10_000 })
    t.equal(await dm.locator('time').getAttribute('datetime'), await timeOf(older), 'the server gave the newest message left')
    t.equal(await dm.locator('.senders').textContent(), admin.fullName)
    await remove(older)
    await dm.waitFor({ state: 'detached', timeout: 10_000 })
    t.pass('with none left, the row goes')
  })

  t.test('the star button sets the starred flag; the starred view lists the message', async (t) => {
    const id = await send(other, { type: 'stream', to: general.id, topic: 'reading', content: 'a message to keep' })
    const starred = async () => ((await services.prisma.userMessage.findUniqueOrThrow({ where: { userId_messageId: { userId: member.id, messageId: id } } })).flags & FLAG_BITS.starred) !== 0
    await page.goto(`${origin}/${topicHash(general.id, 'reading')}`)
    const row = page.locator(`[data-id="${id}"]`)
    await row.waitFor({ timeout: 10_000 })
    await row.hover()
    await row.getByRole('button', { name: 'Star', exact: true }).click()
    await eventually('starred on the server', starred)
    await row.getByRole('button', { name: 'Unstar' }).waitFor()
    await page.getByRole('link', { name: /^Starred/ }).click()
    await page.locator(`[data-id="${id}"] .content`, { hasText: 'a message to keep' }).waitFor({ timeout: 10_000 })
    t.pass('listed in the starred view')
    await page.locator(`[data-id="${id}"]`).hover()
    await page.locator(`[data-id="${id}"]`).getByRole('button', { name: 'Unstar' }).click()
    await eventually('unstarred on the server', async () => !(await starred()))
    await page.locator(`[data-id="${id}"]`).waitFor({ state: 'detached', timeout: 10_000 })
    t.pass('unstarred, it leaves the starred view')
  })

  t.test("the sender's name opens their profile card; Escape closes it", async (t) => {
    await page.goto(`${origin}/${topicHash(general.id, 'reading')}`)
    await page.locator('.message .sender', { hasText: other.fullName }).first().click()
    const card = page.getByRole('dialog', { name: other.fullName })
    await card.waitFor()
    const text = (await card.textContent()) ?? ''
    t.match(text, other.deliveryEmail, 'the email')
    t.match(text, 'Member', 'the role')
    t.ok(await card.evaluate((el) => el === document.activeElement), 'the card has the focus')
    t.same(await seriousViolations(page), [], 'axe-core on the profile card')
    await page.keyboard.press('Escape')
    await card.waitFor({ state: 'detached' })
    t.pass('closed by Escape')
  })

  t.test("one sender line for a sender's consecutive messages; a date line between days", async (t) => {
    const ids = [
      await send(other, { type: 'stream', to: general.id, topic: 'grouping', content: 'from two days ago' }),
      await send(other, { type: 'stream', to: general.id, topic: 'grouping', content: 'grouped one' }),
      await send(other, { type: 'stream', to: general.id, topic: 'grouping', content: 'grouped two' }),
      await send(admin, { type: 'stream', to: general.id, topic: 'grouping', content: 'another sender' }),
    ]
    // The API cannot backdate a message: the first one is moved two days back in the database.
    await services.prisma.message.update({ where: { id: ids[0] }, data: { dateSent: new Date(Date.now() - 2 * 86_400_000) } })
    await page.goto(`${origin}/#starred`)
    await page.reload()
    await page.goto(`${origin}/${topicHash(general.id, 'grouping')}`)
    await page.locator(`[data-id="${ids[3]}"]`).waitFor({ timeout: 10_000 })
    const senders = await Promise.all(ids.map((id) => page.locator(`[data-id="${id}"] .sender`).count()))
    t.same(senders, [1, 1, 0, 1], 'a sender line for the first message of each run (and after the date changes)')
    const separators = await page.$$eval('.messages > .date', (els) => els.map((el) => (el.nextElementSibling as HTMLElement | null)?.dataset.id))
    t.same(separators, [String(ids[0]), String(ids[1])], 'a date line before the first message and where the day changes')
    t.not(await page.locator('.messages > .date').nth(0).textContent(), await page.locator('.messages > .date').nth(1).textContent(), 'two different dates')
  })

  t.test('the mentions view lists a message that mentions the user', async (t) => {
    const id = await send(other, { type: 'stream', to: general.id, topic: 'reading', content: `@**${member.fullName}|${member.id}** have a look` })
    await page.getByRole('link', { name: /^Mentions/ }).click()
    await page.locator(`[data-id="${id}"] .content .user-mention`).waitFor({ timeout: 10_000 })
    t.match(page.url(), /#mentions$/)
  })

  t.test('opened at an old first unread, scrolling down loads the newer pages to the newest', async (t) => {
    expectSuccess(t, await as(app, member).post('/mark_all_as_read'))
    const ctx = { ...services, realm: fx.realm, log: app.log, clientName: 'test', user: other }
    await sendBotMessages(ctx, Array.from({ length: 300 }, (_, i) => ({ kind: 'stream' as const, streamId: general.id, topic: 'long', content: `long ${i}` })))
    await page.goto(`${origin}/#starred`)
    await page.reload()
    await page.goto(`${origin}/${topicHash(general.id, 'long')}`)
    await page.locator('.message .content', { hasText: /^long 0$/ }).waitFor({ timeout: 10_000 })
    t.equal(await page.locator('.message .content', { hasText: /^long 299$/ }).count(), 0, 'opened at the first unread, the newest not loaded yet')
    await eventually('the newest message reached by scrolling down', () =>
      page.evaluate(() => {
        const el = document.querySelector('.messages') as HTMLElement
        el.scrollTop = el.scrollHeight
        el.dispatchEvent(new Event('scroll'))
        return [...document.querySelectorAll('.message .content')].some((c) => c.textContent?.trim() === 'long 299')
      }), { timeoutMs: 30_000, intervalMs: 50 })
    t.pass('the newer pages loaded')
  })

  t.test("the navigation lists a channel's old topics and old direct conversations, none of whose messages is loaded", async (t) => {
    // Loaded afresh at the topic gamma: its messages are all the app loads. The topic beta and the
    // conversation with Otto are older (and read), known only from the server.
    const topicRequests: string[] = []
    page.on('request', (r) => void (r.url().includes(`/json/users/me/${design.id}/topics`) && topicRequests.push(r.url())))
    await page.goto('about:blank')
    await page.goto(`${origin}/${topicHash(design.id, 'gamma')}`)
    await page.locator('.message .content', { hasText: 'news in gamma' }).waitFor({ timeout: 10_000 })
    await page.locator(`nav .topics a[href="${topicHash(design.id, 'beta')}"]`).waitFor({ timeout: 10_000 })
    t.pass("the channel's old topic is listed under it (GET /users/me/{stream_id}/topics)")
    t.equal(await page.locator('#topic-list option[value="beta"]').count(), 1, 'and offered by the compose topic autocomplete')
    t.equal(await page.locator('.message .content', { hasText: 'mine in beta' }).count(), 0)
    t.equal(await page.locator(`nav .dms a[href="#dm/${other.id}"]`).count(), 1, 'an old direct conversation, from recent_private_conversations')
    await page.goto(`${origin}/#channel/${design.id}`)
    await page.locator('.message .content', { hasText: 'mine in beta' }).waitFor({ timeout: 10_000 })
    t.equal(topicRequests.length, 1, 'the topics are fetched once per channel')
  })

  t.test('no errors in the page', async (t) => {
    t.same(errors, [])
  })
})
