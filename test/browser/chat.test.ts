// The app in Chromium against a Roost node: two people chat live, unread
// counts move, edits, reactions and deletions propagate, search, hostile
// content stays text, keyboard use, axe-core on every view, the screenshot.
import t from 'tap'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { eventually } from '../support/eventually.js'
import { expectSuccess } from '../support/expect.js'
import { ROOT } from '../support/root.js'
import { sendMultipart, TINY_PNG } from '../support/multipart.js'
import { freePort, givePassword, launchBrowser, openApp, seriousViolations } from './browser.js'

t.test('two people in two browsers', async (t) => {
  // The server must know its own address: the login's CSRF check compares the browser's Origin with EXTERNAL_URL.
  const port = await freePort()
  const { app, fx, services } = await buildTestApp(t, { config: { externalUrl: `http://localhost:${port}` } })
  await app.listen({ port, host: '127.0.0.1' })
  const origin = `http://${fx.host}:${port}`
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const memberPassword = await givePassword(services, member)
  const general = fx.streams.general
  const browser = await launchBrowser(t)
  const ann = await openApp(t, browser, origin, member, memberPassword)
  // Bob's presence dot in Ann's list of people: hollow until Bob opens the app and reports himself active.
  const bobDot = ann.page.locator(`nav ul.people a[href="#dm/${other.id}"] .dot`)
  await bobDot.waitFor()
  const bobWasOffline = await bobDot.evaluate((el) => el.classList.contains('offline'))
  const bob = await openApp(t, browser, origin, other, await givePassword(services, other))

  t.test("the other person's presence dot goes active when they open the app", async (t) => {
    t.ok(bobWasOffline, 'offline before')
    await ann.page.locator(`nav ul.people a[href="#dm/${other.id}"] .dot.active`).waitFor({ timeout: 10_000 })
    t.equal(await bobDot.getAttribute('aria-label'), 'active')
  })

  t.test('"X is typing…" shows while the other person types, and goes when they empty the box or stop typing', async (t) => {
    const topic = `${origin}/#channel/${general.id}/topic/typing`
    await Promise.all([ann.page.goto(topic), bob.page.goto(topic)])
    await Promise.all([ann.page.waitForSelector('.compose textarea'), bob.page.waitForSelector('.compose textarea')])
    const typingLine = bob.page.locator('.compose .status-line', { hasText: `${member.fullName} is typing…` })
    await ann.page.fill('.compose textarea', 'a')
    await typingLine.waitFor({ timeout: 10_000 })
    await ann.page.fill('.compose textarea', '')
    await typingLine.waitFor({ state: 'detached', timeout: 5_000 })
    t.pass('emptying the box stops it')
    await ann.page.fill('.compose textarea', 'not sent')
    await typingLine.waitFor({ timeout: 10_000 })
    const started = Date.now()
    // No further keystroke: the stop comes after server_typing_stopped_wait_period_milliseconds (12 s), before any expiry (45 s).
    await typingLine.waitFor({ state: 'detached', timeout: 20_000 })
    t.ok(Date.now() - started < 20_000, `gone without a send after ${Date.now() - started} ms`)
    await ann.page.fill('.compose textarea', '')
  })

  t.test('a message sent in one browser arrives live in the other, with an unread count', async (t) => {
    await bob.page.click(`nav a[href="#channel/${general.id}"]`)
    // Ann looks at another view: the message stays unread for her.
    await ann.page.goto(`${origin}/#starred`)
    await ann.page.waitForSelector('nav#nav')
    await bob.page.fill('.compose input[list="topic-list"]', 'greetings')
    await bob.page.fill('.compose textarea', 'Hello from **Bob**')
    await bob.page.keyboard.press('Enter')
    await ann.page.locator(`nav a[href="#channel/${general.id}"] .count`).waitFor({ timeout: 10_000 })
    await bob.page.waitForFunction(() => (document.querySelector('.compose textarea') as HTMLTextAreaElement).value === '', undefined, { timeout: 10_000 })
    t.pass('the compose box is emptied after sending')
    // Ann's channel count: the message is unread until she sees it with the window focused.
    const badge = ann.page.locator(`nav a[href="#channel/${general.id}"] .count`)
    t.ok(Number(await badge.textContent()) >= 1, 'the channel shows an unread count')
  })

  t.test('reading the channel marks it read and the count goes away', async (t) => {
    await ann.page.bringToFront()
    await ann.page.click(`nav a[href="#channel/${general.id}"]`)
    await ann.page.locator('.message .content strong', { hasText: 'Bob' }).waitFor({ timeout: 10_000 })
    await ann.page.locator(`nav a[href="#channel/${general.id}"] .count`).waitFor({ state: 'detached', timeout: 10_000 })
    t.pass('count cleared')
  })

  t.test('the screenshot for the documentation', async (t) => {
    const say = async (from: typeof member, content: string) =>
      expectSuccess(t, await as(app, from).post('/messages', { type: 'stream', to: general.id, topic: 'greetings', content })).id as number
    await say(member, 'Morning! The **release notes** are ready for review.')
    const id = await say(other, 'Thanks, reading them now:\n```\nnpm ci && npm start\n```')
    expectSuccess(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'thumbs_up' }))
    await ann.page.goto(`${origin}/#channel/${general.id}/topic/greetings`)
    await ann.page.locator(`[data-id="${id}"] .reactions button`).waitFor()
    const dir = path.join(ROOT, 'dist/screenshots')
    mkdirSync(dir, { recursive: true })
    await ann.page.screenshot({ path: path.join(dir, 'web-client.png') })
    t.pass('written to dist/screenshots/web-client.png')
  })

  t.test('a reaction, an edit and a deletion reach the other browser', async (t) => {
    const id = expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'greetings', content: 'edit me' })).id as number
    const row = ann.page.locator(`[data-id="${id}"]`)
    await row.waitFor()
    await row.hover()
    await row.getByRole('button', { name: 'Add reaction' }).click()
    await ann.page.fill('.picker input', 'tada')
    await ann.page.click('.picker button[aria-label="tada"]')
    await bob.page.locator(`[data-id="${id}"] .reactions button`).waitFor({ timeout: 10_000 })
    t.match(await bob.page.locator(`[data-id="${id}"] .reactions button`).textContent(), /1/)

    const bobRow = bob.page.locator(`[data-id="${id}"]`)
    await bobRow.hover()
    await bobRow.getByRole('button', { name: 'Edit' }).click()
    await bob.page.fill(`[data-id="${id}"] .edit textarea`, 'edited text')
    await bob.page.click(`[data-id="${id}"] .edit button[type="submit"]`)
    await row.locator('.content', { hasText: 'edited text' }).waitFor({ timeout: 10_000 })
    t.ok(await row.locator('.marker').isVisible(), 'the edited marker shows')

    bob.page.once('dialog', (d) => void d.accept())
    await bobRow.hover()
    await bobRow.getByRole('button', { name: 'Delete' }).click()
    await row.waitFor({ state: 'detached', timeout: 10_000 })
    t.pass('deleted in the other browser')
  })

  t.test('hostile HTML in a message, a name, a topic and a status is shown as text', async (t) => {
    await ann.page.goto(`${origin}/#channel/${general.id}`)
    await ann.page.waitForSelector('.message')
    const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
    expectSuccess(t, await as(app, other).patch('/settings', { full_name: 'Bob &amp; Co' }))
    expectSuccess(t, await as(app, other).post('/users/me/status', { status_text: '<i>x</i><script>window.__pwned=3</script>' }))
    const id = expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: '<svg onload=window.__pwned=4>', content: evil })).id as number
    await ann.page.locator(`[data-id="${id}"]`).waitFor({ timeout: 10_000 })
    t.equal(await ann.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined, 'no script ran')
    t.equal(await ann.page.locator('.content script, .content img[onerror], svg[onload]').count(), 0)
    await ann.page.click(`nav a[href="#channel/${general.id}"]`)
    t.ok(await ann.page.getByText('<svg onload=window.__pwned=4>').first().isVisible(), 'the topic is text')
    t.ok(await ann.page.getByText('Bob &amp; Co').first().isVisible(), 'the name is text, its entity not decoded')
    t.ok(await ann.page.getByText('<i>x</i><script>window.__pwned=3</script>').first().isVisible(), 'the status is text')
  })

  t.test('search with upstream syntax shows the matching messages', async (t) => {
    expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'search', content: 'a distinctive pelican' }))
    await ann.page.fill('header input[type="search"]', 'pelican topic:search')
    await ann.page.keyboard.press('Enter')
    await ann.page.locator('.message .content', { hasText: 'distinctive pelican' }).waitFor({ timeout: 10_000 })
    t.match(ann.page.url(), /#search\//)
  })

  t.test('keyboard only: the next unread topic, moving between messages, replying, composing, the navigation', async (t) => {
    expectSuccess(t, await as(app, member).post('/mark_all_as_read'))
    const say = async (content: string) => expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'keys', content })).id as number
    await say('first key message')
    const second = await say('second key message')
    const page = ann.page
    const focused = () => page.evaluate(() => ({ id: (document.activeElement as HTMLElement | null)?.dataset?.id, tag: document.activeElement?.tagName, href: document.activeElement?.getAttribute('href') }))
    await page.goto(`${origin}/#starred`)
    await page.waitForSelector('.messages')
    await page.locator('.messages').focus()
    await page.keyboard.press('n')
    await page.waitForURL(`${origin}/#channel/${general.id}/topic/keys`)
    await page.locator('.message .content', { hasText: 'second key message' }).waitFor()
    t.pass('n opens the next unread topic')
    await page.keyboard.press('j')
    await page.keyboard.press('j')
    t.equal((await focused()).id, String(second), 'j moves to the next message')
    await page.keyboard.press('r')
    t.equal((await focused()).tag, 'TEXTAREA', 'r replies: the compose box has the focus')
    await page.keyboard.type('typed without a mouse')
    await page.keyboard.press('Enter')
    await bob.page.locator('.message .content', { hasText: 'typed without a mouse' }).waitFor({ timeout: 10_000 })
    t.pass('sent by keyboard')
    await page.keyboard.press('Escape')
    t.equal((await focused()).tag, 'DIV', 'Escape leaves the compose box for the messages')
    await page.keyboard.press('c')
    t.equal((await focused()).tag, 'TEXTAREA', 'c focuses the compose box')
    await page.keyboard.press('Escape')

    // From another view, r on a message opens its conversation with the compose box focused.
    await page.goto(`${origin}/#all`)
    await page.locator('.message .content', { hasText: 'typed without a mouse' }).waitFor()
    await page.locator('.messages').focus()
    await page.keyboard.press('k')
    await page.keyboard.press('r')
    await page.waitForURL(`${origin}/#channel/${general.id}/topic/keys`)
    await page.waitForFunction(() => document.activeElement?.matches('.compose textarea'))
    t.pass('r from all messages opens the topic and focuses the compose box')

    // Tab reaches a channel and then its topic in the navigation; Enter opens them.
    await page.goto(`${origin}/#starred`)
    await page.waitForSelector('.messages')
    const tabTo = async (href: string) => {
      for (let i = 0; i < 80 && (await focused()).href !== href; i++) await page.keyboard.press('Tab')
      t.equal((await focused()).href, href, `Tab reaches ${href}`)
      await page.keyboard.press('Enter')
      await page.waitForURL(`${origin}/${href}`)
    }
    await page.locator('a.skip').focus()
    await tabTo(`#channel/${general.id}`)
    await tabTo(`#channel/${general.id}/topic/keys`)
    await page.screenshot({ path: path.join(ROOT, 'dist/screenshots/web-client-keyboard.png') })
  })

  t.test('topic mute and follow in the topic view: set there, changed elsewhere, shown in both places', async (t) => {
    const page = ann.page
    await page.goto(`${origin}/#channel/${general.id}/topic/keys`)
    const select = page.getByLabel('Topic notifications')
    await select.selectOption({ label: 'Followed' })
    const policyOnServer = async () => {
      const state = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['user_topic'], event_types: ['heartbeat'] }))
      return (state.user_topics as { stream_id: number; topic_name: string; visibility_policy: number }[]).find((u) => u.stream_id === general.id && u.topic_name === 'keys')?.visibility_policy ?? 0
    }
    for (let policy = await policyOnServer(); policy !== 3; policy = await policyOnServer()) await new Promise((resolve) => setTimeout(resolve, 100))
    t.pass('followed on the server (POST /user_topics)')
    const navTopic = page.locator(`nav a[href="#channel/${general.id}/topic/keys"]`)
    await navTopic.locator('.followed-mark').waitFor()
    await page.screenshot({ path: path.join(ROOT, 'dist/screenshots/web-client-topic.png') })
    // Another client of the same user mutes it: the user_topic event reaches this page.
    expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: general.id, topic: 'keys', visibility_policy: 1 }))
    await page.waitForFunction(() => (document.querySelector('.topic-bar select') as HTMLSelectElement).value === '1', undefined, { timeout: 10_000 })
    await page.locator(`nav li.muted a[href="#channel/${general.id}/topic/keys"]`).waitFor()
    t.pass('muted elsewhere: the view and the navigation show it')
    t.same(await seriousViolations(page), [], 'axe-core on a muted topic (its title drawn muted)')
    // A muted topic's new messages do not count as unread for its channel.
    expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'keys', content: 'in a muted topic' }))
    await page.goto(`${origin}/#starred`)
    await page.waitForSelector('.messages')
    t.equal(await page.locator(`nav a[href="#channel/${general.id}"] .count`).count(), 0, 'no channel count for a muted topic')
    await page.goto(`${origin}/#channel/${general.id}/topic/keys`)
    await page.getByLabel('Topic notifications').selectOption({ label: 'Default' })
    for (let policy = await policyOnServer(); policy !== 0; policy = await policyOnServer()) await new Promise((resolve) => setTimeout(resolve, 100))
    t.same(await seriousViolations(page), [], 'axe-core on the topic view')
  })

  t.test('a file attached in the compose box is uploaded and sent as a link', async (t) => {
    await ann.page.goto(`${origin}/#channel/${general.id}/topic/files`)
    await ann.page.waitForSelector('.compose textarea')
    await ann.page.setInputFiles('.compose input[type="file"]', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('roost upload\n') })
    await ann.page.waitForFunction(() => /\/user_uploads\//.test((document.querySelector('.compose textarea') as HTMLTextAreaElement).value), undefined, { timeout: 10_000 })
    await ann.page.focus('.compose textarea')
    await ann.page.keyboard.press('Enter')
    const link = bob.page.locator('.message .content a', { hasText: 'notes.txt' })
    await link.waitFor({ timeout: 10_000 })
    t.match(await link.getAttribute('href'), /\/user_uploads\//)
  })

  t.test('compose autocomplete: @ people, # channels, : emoji picked by keyboard; the topic field offers the channel topics', async (t) => {
    const page = ann.page
    await page.goto(`${origin}/#channel/${general.id}`)
    await page.waitForSelector('.compose textarea')
    const topics = await page.$$eval('datalist#topic-list option', (options) => options.map((o) => (o as HTMLOptionElement).value))
    t.ok(['greetings', 'keys', 'files'].every((topic) => topics.includes(topic)), `the topic field's suggestions are the channel's topics (${topics.join(', ')})`)
    await page.goto(`${origin}/#channel/${general.id}/topic/autocomplete`)
    const box = page.locator('.compose textarea')
    await box.focus()
    const options = page.locator('#compose-suggestions [role="option"]')
    // The other user's name as it is now (an earlier subtest renamed them).
    const name = (await services.prisma.user.findUniqueOrThrow({ where: { id: other.id } })).fullName
    await page.keyboard.type(`Hi @${name.slice(0, 3)}`)
    await options.first().waitFor()
    t.match(await options.first().textContent(), name, 'people whose name matches')
    await page.keyboard.press('Enter')
    t.equal(await box.inputValue(), `Hi @**${name}|${other.id}** `, 'Enter inserts the mention syntax')
    await page.keyboard.type('see #')
    await options.first().waitFor()
    const channels = await options.allTextContents()
    const index = channels.indexOf('#general')
    t.ok(index >= 0, `every channel offered (${channels.join(', ')})`)
    for (let i = 0; i < index; i++) await page.keyboard.press('ArrowDown')
    t.equal(await options.nth(index).getAttribute('aria-selected'), 'true', 'the arrow keys move the selection')
    await page.keyboard.press('Tab')
    t.match(await box.inputValue(), /see #\*\*general\*\* $/, 'Tab inserts the channel link syntax')
    await page.keyboard.type('now :tad')
    // The emoji names load on the first emoji query; the suggestions come when they are in, with no further key.
    await options.first().waitFor({ timeout: 10_000 })
    t.match(await options.first().textContent(), ':tada:')
    await page.keyboard.press('Enter')
    t.equal(await box.inputValue(), `Hi @**${name}|${other.id}** see #**general** now :tada: `)
    await page.keyboard.press('Enter')
    const content = page.locator('.message .content', { hasText: 'see' }).last()
    await content.locator('.user-mention').waitFor({ timeout: 10_000 })
    t.equal(await content.locator('.user-mention').textContent(), `@${name}`, 'the sent message shows the mention')
    t.equal(await content.locator('a.stream').getAttribute('data-stream-id'), String(general.id), 'the channel link')
    t.equal(await content.locator('.emoji').getAttribute('aria-label'), 'tada', 'and the emoji')
  })

  t.test('the preview shows the message rendered by the server', async (t) => {
    const page = ann.page
    const box = page.locator('.compose textarea')
    await box.fill('**bold** and `code`')
    const [rendered] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/json/messages/render')), page.getByRole('button', { name: 'Preview', exact: true }).click()])
    t.equal(rendered.status(), 200, 'POST /messages/render')
    await page.locator('.compose .preview strong', { hasText: 'bold' }).waitFor()
    t.equal(await page.locator('.compose .preview code').textContent(), 'code')
    await page.getByRole('button', { name: 'Write', exact: true }).click()
    await page.locator('.compose .preview').waitFor({ state: 'detached' })
    await box.fill('')
  })

  t.test('a file pasted or dropped into the compose box is uploaded and linked', async (t) => {
    const page = ann.page
    const box = page.locator('.compose textarea')
    const uploaded = async (name: string) => (await services.prisma.attachment.findMany({ where: { ownerId: member.id, fileName: name } })).length
    await page.evaluate(() => {
      const data = new DataTransfer()
      data.items.add(new File(['pasted bytes\n'], 'pasted.txt', { type: 'text/plain' }))
      document.querySelector('.compose textarea')!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
    })
    await eventually('the pasted file linked', () => box.inputValue(), { until: (v) => /\[pasted\.txt\]\(\/user_uploads\/[^)]+\)/.test(v) })
    t.equal(await uploaded('pasted.txt'), 1, 'the pasted file is on the server')
    await page.evaluate(() => {
      const data = new DataTransfer()
      data.items.add(new File(['dropped bytes\n'], 'dropped.txt', { type: 'text/plain' }))
      document.querySelector('.compose')!.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }))
    })
    const text = await eventually('the dropped file linked', () => box.inputValue(), { until: (v) => /\[dropped\.txt\]\(\/user_uploads\/[^)]+\)/.test(v) })
    t.match(text, /^\[pasted\.txt\]\(.*\)\n\[dropped\.txt\]\(.*\)\n$/, 'both links, one a line')
    t.equal(await uploaded('dropped.txt'), 1, 'the dropped file is on the server')
    await box.focus()
    await page.keyboard.press('Enter')
    const link = bob.page.locator('.message .content a', { hasText: 'dropped.txt' })
    await link.waitFor({ timeout: 10_000 })
    const href = (await link.getAttribute('href')) ?? ''
    t.equal(await bob.page.evaluate(async (url) => (await fetch(url)).status, href), 200, 'the other user can fetch it')
  })

  t.test('quote and reply puts the quoted message in the compose box', async (t) => {
    const page = ann.page
    const id = expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'autocomplete', content: 'worth *quoting*' })).id as number
    const row = page.locator(`[data-id="${id}"]`)
    await row.waitFor({ timeout: 10_000 })
    await row.hover()
    await row.getByRole('button', { name: 'Quote and reply' }).click()
    const box = page.locator('.compose textarea')
    const text = await eventually('the quote in the compose box', () => box.inputValue(), { until: (v) => v.includes('```quote') })
    const name = (await services.prisma.user.findUniqueOrThrow({ where: { id: other.id } })).fullName
    t.equal(text, `@_**${name}|${other.id}** said:\n\`\`\`quote\nworth *quoting*\n\`\`\`\n`, 'a silent mention and the raw Markdown in a quote block')
    t.ok(await box.evaluate((el) => el === document.activeElement), 'the compose box has the focus')
    await box.fill('')
  })

  t.test("clicking one's own reaction removes it", async (t) => {
    const page = ann.page
    const id = expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'autocomplete', content: 'react to me' })).id as number
    expectSuccess(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'heart' }))
    expectSuccess(t, await as(app, other).post(`/messages/${id}/reactions`, { emoji_name: 'octopus' }))
    const row = page.locator(`[data-id="${id}"]`)
    const mine = row.locator('.reactions button[aria-pressed="true"]')
    await mine.waitFor({ timeout: 10_000 })
    await mine.click()
    await mine.waitFor({ state: 'detached', timeout: 10_000 })
    const reactions = async () => (expectSuccess(t, await as(app, member).get(`/messages/${id}`)).message as { reactions: { emoji_name: string }[] }).reactions.map((r) => r.emoji_name)
    t.same(await reactions(), ['octopus'], "removed on the server; the other user's stays")
    t.equal(await row.locator('.reactions button').count(), 1)
  })

  t.test('a custom emoji uploaded through the API: in the picker and the autocomplete, reacted with, shown as its image', async (t) => {
    const page = ann.page
    const admin = await fx.user('admin')
    expectSuccess(t, await sendMultipart(app, admin, 'POST', '/realm/emoji/roost_party', [{ name: 'f', fileName: 'party.png', contentType: 'image/png', data: TINY_PNG }]))
    const emoji = Object.values(expectSuccess(t, await as(app, member).get('/realm/emoji')).emoji as Record<string, { id: string; name: string; source_url: string }>).find((e) => e.name === 'roost_party')!
    const id = expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'autocomplete', content: 'party time' })).id as number
    const row = page.locator(`[data-id="${id}"]`)
    await row.waitFor({ timeout: 10_000 })
    await row.hover()
    await row.getByRole('button', { name: 'Add reaction' }).click()
    await page.fill('.picker input', 'roost_pa')
    const choice = page.locator('.picker button[aria-label="roost_party"] img')
    await choice.waitFor({ timeout: 10_000 })
    t.equal(await choice.getAttribute('src'), emoji.source_url, 'offered in the picker with its image (live, from the realm_emoji event)')
    await choice.click()
    const image = (p: typeof page) => p.locator(`[data-id="${id}"] .reactions button img[alt=":roost_party:"]`)
    await image(page).waitFor({ timeout: 10_000 })
    await image(bob.page).waitFor({ timeout: 10_000 })
    t.equal(await image(bob.page).getAttribute('src'), emoji.source_url, "the reaction shows the emoji's image in the other browser")
    t.ok(await image(page).evaluate((img) => (img as HTMLImageElement).naturalWidth > 0), 'the image loads from the server')
    const reactions = expectSuccess(t, await as(app, member).get(`/messages/${id}`)).message as { reactions: { emoji_code: string; reaction_type: string }[] }
    t.match(reactions.reactions, [{ emoji_code: emoji.id, reaction_type: 'realm_emoji' }])

    await page.goto(`${origin}/#channel/${general.id}/topic/autocomplete`)
    const box = page.locator('.compose textarea')
    await box.focus()
    await page.keyboard.type('so :roost_p')
    const option = page.locator('#compose-suggestions [role="option"]').first()
    await option.waitFor()
    t.equal(await option.locator('img').getAttribute('src'), emoji.source_url, 'offered in the autocomplete with its image')
    t.match(await option.textContent(), ':roost_party:')
    await page.keyboard.press('Enter')
    t.equal(await box.inputValue(), 'so :roost_party: ')
    await box.fill('')

    expectSuccess(t, await as(app, admin).delete('/realm/emoji/roost_party'))
    await row.hover()
    await row.getByRole('button', { name: 'Add reaction' }).click()
    await page.fill('.picker input', 'roost_pa')
    await page.locator('.picker button[aria-label="roost_party"]').waitFor({ state: 'detached', timeout: 10_000 })
    t.pass('deactivated, it is no longer offered')
    await page.keyboard.press('Escape')
    t.equal(await image(page).getAttribute('src'), emoji.source_url, 'and its reaction still shows its image')
    await image(page).click()
    await image(page).waitFor({ state: 'detached', timeout: 10_000 })
    t.pass('clicking it removes the reaction (by its ID and type)')
  })

  t.test('a direct message sent from the compose box of a direct conversation', async (t) => {
    const page = ann.page
    await page.goto(`${origin}/#dm/${other.id}`)
    await page.locator('.compose textarea').fill('a direct hello')
    await page.locator('.compose textarea').press('Enter')
    await page.locator('.message .content', { hasText: 'a direct hello' }).waitFor({ timeout: 10_000 })
    const sent = await services.prisma.message.findFirstOrThrow({ where: { content: 'a direct hello' } })
    t.match(sent, { senderId: member.id, streamId: null, dmUserIds: [member.id, other.id].sort((a, b) => a - b) }, 'a direct message to the other user')
    await bob.page.locator(`nav a[href="#dm/${member.id}"] .count`).waitFor({ timeout: 10_000 })
    t.pass('it arrives unread for the other user')
  })

  t.test('axe-core on the emoji picker, the login page and an invitation page', async (t) => {
    const page = ann.page
    await page.goto(`${origin}/#channel/${general.id}/topic/autocomplete`)
    await page.waitForSelector('.message')
    const id = expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'autocomplete', content: 'pick an emoji' })).id as number
    const row = page.locator(`[data-id="${id}"]`)
    await row.waitFor({ timeout: 10_000 })
    await row.hover()
    await row.getByRole('button', { name: 'Add reaction' }).click()
    await page.locator('.picker input').waitFor()
    t.same(await seriousViolations(page), [], 'the emoji picker open')
    await row.getByRole('button', { name: 'Add reaction' }).click()
    await page.locator('.picker').waitFor({ state: 'detached' })

    const context = await browser.newContext()
    t.teardown(() => context.close().catch(() => undefined))
    const anonymous = await context.newPage()
    await anonymous.goto(`${origin}/login`)
    await anonymous.waitForSelector('#username')
    t.same(await seriousViolations(anonymous), [], 'the login page')
    const admin = await fx.user('admin')
    const link = expectSuccess(t, await as(app, admin).post('/invites/multiuse', { invite_expires_in_minutes: 60, stream_ids: JSON.stringify([general.id]) })).invite_link as string
    await anonymous.goto(`${origin}/join/${link.split('/join/')[1]}`)
    await anonymous.waitForSelector('form[action^="/join/"]')
    t.same(await seriousViolations(anonymous), [], 'an invitation page')
  })

  t.test('a view opens at the first unread; scrolling up loads older messages until the first', async (t) => {
    for (let i = 0; i < 160; i++) {
      expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'history', content: `history ${i}` }))
    }
    await ann.page.goto(`${origin}/#channel/${general.id}/topic/history`)
    await ann.page.locator('.message .content', { hasText: /^history 0$/ }).waitFor({ timeout: 10_000 })
    t.pass('opened at the first unread message')
    expectSuccess(t, await as(app, member).post('/mark_all_as_read'))
    await ann.page.goto(`${origin}/#all`)
    await ann.page.reload()
    await ann.page.goto(`${origin}/#channel/${general.id}/topic/history`)
    await ann.page.locator('.message .content', { hasText: 'history 159' }).waitFor({ timeout: 10_000 })
    const oldest = ann.page.locator('.message .content', { hasText: /^history 0$/ })
    // Scroll to the top on every animation frame until the first message is in the page.
    await ann.page.waitForFunction(
      () => {
        const el = document.querySelector('.messages') as HTMLElement
        el.scrollTop = 0
        el.dispatchEvent(new Event('scroll'))
        return [...document.querySelectorAll('.message .content')].some((c) => c.textContent?.trim() === 'history 0')
      },
      undefined,
      { polling: 'raf', timeout: 60_000 },
    )
    t.equal(await oldest.count(), 1, 'the first message of the topic is reached')
    t.ok((await ann.page.locator('.message').count()) <= 150, 'no more than the window is rendered')
  })

  t.test('axe-core finds no serious or critical violation on any view', async (t) => {
    const views = ['#all', '#mentions', '#starred', `#channel/${general.id}`, `#channel/${general.id}/topic/greetings`, `#dm/${other.id}`, '#search/pelican']
    for (const hash of views) {
      await ann.page.goto(`${origin}/${hash}`)
      await ann.page.waitForSelector('.messages')
      t.same(await seriousViolations(ann.page), [], hash)
    }
    await ann.page.click('header button:has-text("Settings")')
    await ann.page.waitForSelector('.settings')
    t.same(await seriousViolations(ann.page), [], 'settings')
    await ann.page.keyboard.press('Escape')
  })


  t.test('on a 360 px wide screen the navigation is behind the menu button', async (t) => {
    const phone = await openApp(t, browser, origin, member, memberPassword, { width: 360, height: 740 })
    t.notOk(await phone.page.isVisible('nav#nav'), 'navigation hidden')
    await phone.page.click('header button.menu')
    await phone.page.click(`nav a[href="#channel/${general.id}"]`)
    await phone.page.waitForSelector('.message')
    t.notOk(await phone.page.isVisible('nav#nav'), 'navigation closes after choosing')
    const width = await phone.page.evaluate(() => document.documentElement.scrollWidth)
    t.ok(width <= 360, `no horizontal scrolling (${width} px)`)
    t.same(await seriousViolations(phone.page), [], 'axe-core')
    t.same(phone.errors, [])
  })

  t.test('no uncaught error in either page', async (t) => {
    t.same(ann.errors, [])
    t.same(bob.errors, [])
  })
})
