// The settings dialog clicked through in Chromium against a Roost node: the
// avatar (upload, shown live; reset), the emoji style (the sets the app draws:
// sprites of emoji-datasource's google and twitter sheets, or plain text), a
// channel's notification settings, the notification sounds (the page's
// Web Audio oscillators recorded by an init script), muted users (muted from
// the profile card, their messages hidden live behind a notice revealed by
// keyboard, no sound, unmuted from the settings' list).
import t from 'tap'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { eventually } from '../support/eventually.js'
import { ROOT } from '../support/root.js'
import { SOUND_NOTES } from '../../web/src/model/sounds.js'
import { FLAG_BITS } from '../../src/domain/flags.js'
import { freePort, givePassword, launchBrowser, openApp, seriousViolations } from './browser.js'

t.test('the settings dialog', async (t) => {
  const port = await freePort()
  const { app, fx, services } = await buildTestApp(t, { config: { externalUrl: `http://localhost:${port}` } })
  await app.listen({ port, host: '127.0.0.1' })
  const origin = `http://${fx.host}:${port}`
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const { general } = fx.streams
  const browser = await launchBrowser(t)
  const shots = path.join(ROOT, 'dist/screenshots')
  mkdirSync(shots, { recursive: true })
  const ownAvatarUrl = async () => expectSuccess(t, await as(app, member).get('/users/me')).avatar_url as string
  const mine = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: general.id, topic: 'faces', content: 'my face :smile:' })).id as number
  expectSuccess(t, await as(app, other).post(`/messages/${mine}/reactions`, { emoji_name: 'thumbs_up' }))
  const { context, page, errors } = await openApp(t, browser, origin, member, await givePassword(services, member))
  await page.goto(`${origin}/#channel/${general.id}/topic/faces`)
  const row = page.locator(`[data-id="${mine}"]`)
  await row.waitFor({ timeout: 10_000 })
  const settings = page.getByRole('dialog', { name: 'Settings' })

  t.test('an uploaded avatar shows in the settings and on the messages, live; reset returns to the default', async (t) => {
    const before = await ownAvatarUrl()
    await page.getByRole('button', { name: 'Settings' }).click()
    await settings.waitFor()
    const png = await sharp({ create: { width: 120, height: 120, channels: 3, background: { r: 230, g: 90, b: 40 } } }).png().toBuffer()
    await settings.getByLabel('Upload a new avatar').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: png })
    await settings.getByRole('status').filter({ hasText: 'Saved' }).first().waitFor({ timeout: 10_000 })
    const uploaded = await ownAvatarUrl()
    t.not(uploaded, before, 'the server has a new avatar')
    t.equal((await services.prisma.user.findUniqueOrThrow({ where: { id: member.id } })).avatarSource, 'U')
    await page.waitForFunction((url) => (document.querySelector('.own-avatar') as HTMLImageElement | null)?.getAttribute('src') === url, uploaded, { timeout: 10_000 })
    t.pass('the settings show it')
    await page.waitForFunction((url) => document.querySelector(`.message .avatar`)?.getAttribute('src') === url, uploaded, { timeout: 10_000 })
    t.pass("the member's messages show it")
    t.ok(await page.locator('.own-avatar').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the image loads')
    t.same(await seriousViolations(page), [], 'axe-core: no serious or critical violation')
    await settings.screenshot({ path: path.join(shots, 'settings-avatar.png') })

    await settings.getByRole('button', { name: 'Use the default avatar' }).click()
    await page.waitForFunction((url) => (document.querySelector('.own-avatar') as HTMLImageElement | null)?.getAttribute('src') !== url, uploaded, { timeout: 10_000 })
    t.equal((await services.prisma.user.findUniqueOrThrow({ where: { id: member.id } })).avatarSource, 'G', 'back to the default')
    t.equal(await page.locator('.own-avatar').getAttribute('src'), await ownAvatarUrl())
    await settings.getByRole('button', { name: 'Close' }).click()
  })

  t.test('the emoji style: google and twitter sprites, plain text', async (t) => {
    const emojiset = async () => (await services.prisma.userSettings.findUniqueOrThrow({ where: { userId: member.id } })).emojiset
    const sprite = row.locator('.content span.emoji')
    // google is the default: the message's emoji and the reaction are drawn from its sheet.
    await page.waitForFunction((id) => document.querySelector(`[data-id="${id}"] .content span.emoji`)?.classList.contains('emoji-sprite'), mine, { timeout: 10_000 })
    const googleStyle = (await sprite.getAttribute('style')) ?? ''
    const googleUrl = /url\("([^"]+)"\)/.exec(googleStyle)?.[1] ?? ''
    t.match(googleUrl, /^\/assets\/32-[\w-]+\.png$/, 'a bundled sheet')
    const sheet = await page.evaluate(async (url) => {
      const res = await fetch(url)
      return { status: res.status, type: res.headers.get('content-type'), size: (await res.arrayBuffer()).byteLength }
    }, googleUrl)
    t.match(sheet, { status: 200, type: 'image/png' })
    t.ok(sheet.size > 1_000_000, 'the whole sheet')
    t.equal(await row.locator('.reactions .emoji-sprite').count(), 1, 'the reaction too')
    await row.screenshot({ path: path.join(shots, 'emoji-google.png') })

    await page.getByRole('button', { name: 'Settings' }).click()
    await settings.getByLabel('Emoji style').selectOption({ label: 'Twitter' })
    await page.waitForFunction(([id, url]) => !(document.querySelector(`[data-id="${id}"] .content span.emoji`)?.getAttribute('style') ?? url).includes(url!), [String(mine), googleUrl] as const, { timeout: 10_000 })
    t.equal(await emojiset(), 'twitter', 'saved on the server')
    t.match(await sprite.getAttribute('style'), /url\("\/assets\/32-[\w-]+\.png"\)/, "twitter's sheet")
    await settings.getByRole('button', { name: 'Close' }).click()
    await row.screenshot({ path: path.join(shots, 'emoji-twitter.png') })

    await page.getByRole('button', { name: 'Settings' }).click()
    await settings.getByLabel('Emoji style').selectOption({ label: 'Plain text' })
    await row.locator('.reactions .emoji-text', { hasText: ':thumbs_up:' }).waitFor({ timeout: 10_000 })
    t.equal(await emojiset(), 'text')
    t.equal(await sprite.getAttribute('style'), null, 'no sprite')
    t.equal(await sprite.textContent(), ':smile:')
    await settings.getByRole('button', { name: 'Close' }).click()
    await row.screenshot({ path: path.join(shots, 'emoji-text.png') })
  })

  t.test("a channel's notification settings: set from the dialog, changed elsewhere shown live", async (t) => {
    const subscription = () => services.prisma.subscription.findFirstOrThrow({ where: { userId: member.id, streamId: general.id } })
    await page.getByRole('button', { name: 'Settings' }).click()
    const channel = settings.getByRole('group', { name: '#general notifications' })
    await channel.waitFor()
    t.same(await Promise.all(['Desktop', 'Sound', 'Mobile push', 'Email', 'Notify for @all mentions'].map((label) => channel.getByLabel(label).isChecked())), [false, false, false, false, true], "the user's defaults, inherited (the subscription's are null)")
    t.match(await subscription(), { desktopNotifications: null, emailNotifications: null, wildcardMentionsNotify: null })

    await channel.getByLabel('Email').check()
    await channel.getByLabel('Notify for @all mentions').uncheck()
    await channel.getByLabel('Mobile push').check()
    for (;;) {
      const sub = await subscription()
      if (sub.emailNotifications === true && sub.wildcardMentionsNotify === false && sub.pushNotifications === true) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    t.pass('saved on the server (POST /users/me/subscriptions/properties)')
    t.match(await subscription(), { desktopNotifications: null, audibleNotifications: null })

    // Another client turns desktop notifications on: the box follows the subscription event.
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: JSON.stringify([{ stream_id: general.id, property: 'desktop_notifications', value: true }]) }))
    await page.waitForFunction(() => {
      const group = [...document.querySelectorAll('.channel-notifications')].find((f) => f.querySelector('legend')?.textContent === '#general notifications')
      return (group?.querySelector('input') as HTMLInputElement | null)?.checked === true
    }, undefined, { timeout: 10_000 })
    t.ok(await channel.getByLabel('Desktop').isChecked(), 'shown live')
    t.same(await seriousViolations(page), [], 'axe-core: no serious or critical violation')
    await channel.scrollIntoViewIfNeeded()
    await page.screenshot({ path: path.join(shots, 'settings-channel-notifications.png') })
    await settings.getByRole('button', { name: 'Close' }).click()
  })

  t.test('notification sounds: chosen and played in the settings; a direct message plays the chosen sound; none, sounds off, a muted channel and a message read on arrival play nothing', async (t) => {
    const owner = await fx.user('owner')
    const { design } = fx.streams
    type Played = { wave: string; frequency: number }[]
    // Every oscillator the page starts, with its waveform and pitch: what the app synthesizes, as it plays it.
    await context.addInitScript(() => {
      const notes: { wave: string; frequency: number }[] = []
      Object.defineProperty(window, 'startedNotes', { value: notes })
      const start = OscillatorNode.prototype.start
      OscillatorNode.prototype.start = function (this: OscillatorNode, when?: number) {
        notes.push({ wave: this.type, frequency: this.frequency.value })
        return start.call(this, when)
      }
    })
    await page.reload()
    await row.waitFor({ timeout: 10_000 })
    const played = () => page.evaluate(() => (window as unknown as { startedNotes: { wave: string; frequency: number }[] }).startedNotes.splice(0))
    const notesOf = (name: string) => SOUND_NOTES[name]!.map((n) => ({ wave: n.wave, frequency: n.frequency }))
    const dmCount = page.locator(`nav .dms a[href="#dm/${other.id}"] .count`)
    const designCount = page.locator(`nav a[href="#channel/${design.id}"] .count`)
    const counted = (what: string, count: typeof dmCount, n: number) => eventually(what, () => count.textContent({ timeout: 1_000 }), { until: (text) => text === String(n) })
    const dm = async (content: string) => expectSuccess(t, await as(app, other).post('/messages', { type: 'direct', to: JSON.stringify([member.id]), content }))
    const inDesign = async (content: string) => expectSuccess(t, await as(app, owner).post('/messages', { type: 'stream', to: design.id, topic: 'bells', content }))
    const settingsRow = () => services.prisma.userSettings.findUniqueOrThrow({ where: { userId: member.id } })

    await page.getByRole('button', { name: 'Settings' }).click()
    const choice = settings.getByLabel('Notification sound')
    t.equal(await choice.inputValue(), 'zulip', "upstream's default sound")
    const toggles = ['Sounds for direct messages, mentions and alert words', "Sounds for every message in channels (each channel's default)", 'Sounds for followed topics']
    t.same(await Promise.all(toggles.map((label) => settings.getByLabel(label).isChecked())), [true, false, true], "the user's settings")
    t.same(await choice.locator('option').allTextContents(), ['Zulip', 'Ding', 'Chime bell', 'None'], "register's available_notification_sounds")
    await choice.selectOption({ label: 'Ding' })
    await eventually('Ding saved', settingsRow, { until: (row) => row.notificationSound === 'ding' })
    await settings.getByRole('button', { name: 'Play sound' }).click()
    t.same(await eventually('the play button plays Ding', played, { until: (notes) => notes.length > 0 }), notesOf('ding'), 'the play button plays the chosen sound')
    t.same(await seriousViolations(page), [], 'axe-core: no serious or critical violation')
    await settings.getByRole('group', { name: 'Notifications', exact: true }).screenshot({ path: path.join(shots, 'settings-sounds.png') })
    await settings.getByRole('button', { name: 'Close' }).click()

    await dm('a sound, please')
    const heard = await eventually('the direct message plays Ding', played, { until: (notes) => notes.length > 0 })
    t.same(heard, notesOf('ding'), 'a direct message from another user plays the chosen sound, once')
    await counted('the direct message arrives', dmCount, 1)

    expectSuccess(t, await as(app, member).patch('/settings', { notification_sound: 'none' }))
    await dm('none')
    await counted('the second direct message arrives', dmCount, 2)
    t.same(await played(), [], 'the sound none plays nothing')

    expectSuccess(t, await as(app, member).patch('/settings', { notification_sound: 'chime-bell' }))
    await page.getByRole('button', { name: 'Settings' }).click()
    await settings.getByLabel(toggles[0]!).uncheck()
    await eventually('enable_sounds saved', settingsRow, { until: (row) => !row.enableSounds })
    await settings.getByRole('button', { name: 'Close' }).click()
    await dm('sounds off')
    await counted('the third direct message arrives', dmCount, 3)
    t.same(await played(), [], 'with enable_sounds off a direct message plays nothing')

    // A channel whose sound is on plays for every message, until it is muted.
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: JSON.stringify([{ stream_id: design.id, property: 'audible_notifications', value: true }]) }))
    await inDesign('ring')
    t.same(await eventually('the channel plays Chime bell', played, { until: (notes) => notes.length > 0 }), notesOf('chime-bell'), "a channel's message plays when its sound is on, enable_sounds aside")
    await counted('the channel message arrives', designCount, 1)
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: JSON.stringify([{ stream_id: design.id, property: 'is_muted', value: true }]) }))
    await inDesign('muted ring')
    await counted('the muted channel message arrives', designCount, 2)
    t.same(await played(), [], 'a muted channel plays nothing, its sound on or not')

    // A message that shows on arrival in the focused window is read at once: no sound (upstream plays only for unread ones).
    expectSuccess(t, await as(app, member).patch('/settings', { enable_sounds: true }))
    await page.goto(`${origin}/#dm/${other.id}`)
    await page.getByText('sounds off').waitFor({ timeout: 10_000 })
    t.ok(await page.evaluate(() => document.hasFocus()), 'the window has focus')
    const seen = (await dm('seen at once')).id as number
    await page.getByText('seen at once').waitFor({ timeout: 10_000 })
    // Marked read by the view (after the app's wait for it to be seen): the sound would have started by then.
    await eventually('the message marked read', () => services.prisma.userMessage.findUniqueOrThrow({ where: { userId_messageId: { userId: member.id, messageId: seen } } }), { until: (um) => (um.flags & FLAG_BITS.read) !== 0 })
    t.same(await played(), [], 'a direct message shown at once in its open conversation plays nothing')
  })

  t.test('muted users: muted from the profile card, messages hidden live and revealed by keyboard, silent, listed and unmuted in the settings', async (t) => {
    // Follows the sound test: its recorder of started notes is in the page, the sound is Chime bell with enable_sounds on.
    const owner = await fx.user('owner')
    const played = () => page.evaluate(() => (window as unknown as { startedNotes: { wave: string; frequency: number }[] }).startedNotes.splice(0))
    const notes = SOUND_NOTES['chime-bell']!.map((n) => ({ wave: n.wave, frequency: n.frequency }))
    const said = expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'mute', content: 'words of the soon muted' })).id as number
    await page.goto(`${origin}/#channel/${general.id}/topic/mute`)
    const msg = page.locator(`[data-id="${said}"]`)
    await msg.getByText('words of the soon muted').waitFor({ timeout: 10_000 })
    const dmLink = page.locator(`nav .dms a[href="#dm/${other.id}"]`)
    await dmLink.waitFor()

    await msg.getByRole('button', { name: other.fullName }).click()
    const card = page.getByRole('dialog', { name: other.fullName })
    page.once('dialog', (d) => void d.accept())
    await card.getByRole('button', { name: 'Mute this user' }).click()
    await msg.locator('.hidden-message').waitFor({ timeout: 10_000 })
    t.pass('muted: the message becomes a notice live')
    await card.getByRole('button', { name: 'Unmute this user' }).waitFor()
    t.pass('the card offers to unmute')
    t.ok(await services.prisma.mutedUser.count({ where: { userId: member.id, mutedUserId: other.id } }), 'muted on the server')
    await card.press('Escape')
    t.equal(await msg.getByText('words of the soon muted').count(), 0, 'the content is hidden')
    t.equal(await msg.getByText(other.fullName).count(), 0, "the sender's name is hidden")
    t.equal(await msg.locator('img').count(), 0, "the sender's avatar is hidden")
    t.ok(await msg.getByText('Muted user').isVisible(), 'the sender shows as "Muted user"')
    await dmLink.waitFor({ state: 'detached' })
    t.pass('the direct conversation with the muted user leaves the navigation')
    t.same(await seriousViolations(page), [], 'axe-core on a hidden message')
    await msg.screenshot({ path: path.join(shots, 'muted-user-message.png') })

    // By keyboard: the time link, Tab to the reveal button, Enter; Enter on the hide button hides it again.
    const focusedName = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent)
    await msg.locator('.time').focus()
    await page.keyboard.press('Tab')
    t.equal(await focusedName(), 'Click here to reveal.', 'Tab reaches the reveal button')
    await page.keyboard.press('Enter')
    await msg.getByText('words of the soon muted').waitFor()
    t.ok(await msg.getByRole('button', { name: other.fullName }).isVisible(), 'revealed: the sender is shown')
    t.equal(await focusedName(), 'Hide muted message again', 'the focus moves to the control that hides it again')
    await msg.screenshot({ path: path.join(shots, 'muted-user-revealed.png') })
    await page.keyboard.press('Enter')
    await msg.locator('.hidden-message').waitFor()
    t.equal(await focusedName(), 'Click here to reveal.', 'hidden again, the focus back on the reveal button')

    // A muted user's direct message: read on arrival, no sound; the next one from someone else plays.
    await page.goto(`${origin}/#starred`)
    await page.waitForSelector('.messages')
    expectSuccess(t, await as(app, other).post('/messages', { type: 'direct', to: JSON.stringify([member.id]), content: 'muted sender speaks' }))
    expectSuccess(t, await as(app, owner).post('/messages', { type: 'direct', to: JSON.stringify([member.id]), content: 'the owner speaks' }))
    await page.locator(`nav .dms a[href="#dm/${owner.id}"] .count`).waitFor({ timeout: 10_000 })
    t.same(await eventually('the owner plays Chime bell', played, { until: (n) => n.length > 0 }), notes, 'one sound, for the owner alone')
    t.equal(await dmLink.count(), 0, "the muted user's direct message brings no conversation to the navigation")

    await page.getByRole('button', { name: 'Settings' }).click()
    const list = settings.getByRole('group', { name: 'Muted users' })
    await list.getByRole('cell', { name: other.fullName, exact: true }).waitFor()
    t.same(await seriousViolations(page), [], 'axe-core on the settings with a muted user')
    await list.scrollIntoViewIfNeeded()
    await list.screenshot({ path: path.join(shots, 'settings-muted-users.png') })
    await list.getByRole('button', { name: `Unmute ${other.fullName}` }).click()
    await list.getByText('You have not muted anyone.').waitFor({ timeout: 10_000 })
    t.equal(await services.prisma.mutedUser.count({ where: { userId: member.id } }), 0, 'unmuted on the server')
    await settings.getByRole('button', { name: 'Close' }).click()
    await dmLink.waitFor()
    t.pass('the direct conversation is back in the navigation')
    await page.goto(`${origin}/#channel/${general.id}/topic/mute`)
    await msg.getByText('words of the soon muted').waitFor({ timeout: 10_000 })
    t.equal(await msg.locator('.hidden-message').count(), 0, 'unmuted: the message shows again')
  })

  t.test("account-wide notification settings: an email setting saved and shown live; desktop notifications of mentions and alert words, none with the setting off", async (t) => {
    const settingsRow = () => services.prisma.userSettings.findUniqueOrThrow({ where: { userId: member.id } })
    await page.getByRole('button', { name: 'Settings' }).click()
    const email = settings.getByLabel('Emails for direct messages, mentions and alert words while I am away')
    t.ok(await email.isChecked(), "upstream's default: on")
    await email.uncheck()
    await eventually('enable_offline_email_notifications saved', settingsRow, { until: (row) => !row.enableOfflineEmailNotifications })
    const batching = settings.getByLabel('Wait before sending notification emails')
    await batching.selectOption({ label: '10 minutes' })
    await eventually('the batching period saved', settingsRow, { until: (row) => row.emailNotificationsBatchingPeriodSeconds === 600 })
    const online = settings.getByLabel('Send mobile notifications even while I am online')
    expectSuccess(t, await as(app, member).patch('/settings', { enable_online_push_notifications: !(await online.isChecked()), enable_offline_email_notifications: true }))
    await eventually('another client\'s change shows', () => email.isChecked(), { until: (on) => on })
    t.equal(await online.isChecked(), (await settingsRow()).enableOnlinePushNotifications, 'live from user_settings events')
    await settings.getByRole('button', { name: 'Close' }).click()

    // A stand-in for the browser's Notification (granted), and a window without focus, where the app notifies.
    await context.addInitScript(() => {
      const shown: { title: string; body?: string }[] = []
      Object.defineProperty(window, 'shownNotifications', { value: shown })
      class FakeNotification {
        static permission = 'granted'
        static requestPermission = () => Promise.resolve('granted')
        constructor(title: string, options?: { body?: string }) {
          shown.push({ title, body: options?.body })
        }
      }
      Object.defineProperty(window, 'Notification', { value: FakeNotification, configurable: true, writable: true })
      document.hasFocus = () => false
    })
    await page.goto(`${origin}/#channel/${general.id}/topic/faces`)
    await page.reload()
    await row.waitFor({ timeout: 10_000 })
    const shown = () => page.evaluate(() => (window as unknown as { shownNotifications: { title: string; body?: string }[] }).shownNotifications.splice(0))
    const arrived = (id: number) => page.locator(`[data-id="${id}"]`).waitFor({ timeout: 10_000 })
    const say = async (content: string) => expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'faces', content })).id as number
    expectSuccess(t, await as(app, member).post('/users/me/alert_words', { alert_words: JSON.stringify(['kestrel']) }))
    // The channel test above turned #general's own desktop notifications on.
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions/properties', { subscription_data: JSON.stringify([{ stream_id: general.id, property: 'desktop_notifications', value: false }]) }))
    await arrived(await say(`@**${member.fullName}** look`))
    t.match(await eventually('the mention notifies', shown, { until: (n) => n.length > 0 }), [{ title: `${other.fullName} (#general > faces)`, body: `@${member.fullName} look` }], 'a mention notifies')
    await arrived(await say('a kestrel overhead'))
    t.match(await eventually('the alert word notifies', shown, { until: (n) => n.length > 0 }), [{ body: 'a kestrel overhead' }], 'an alert word notifies')
    await arrived(await say('nothing for you'))
    t.same(await shown(), [], 'a plain message does not')
    expectSuccess(t, await as(app, member).patch('/settings', { enable_desktop_notifications: false }))
    // Events come in order: once the mention shows, the app has the setting.
    await arrived(await say(`@**${member.fullName}** again`))
    t.same(await shown(), [], 'no mention notifies with enable_desktop_notifications off')
    expectSuccess(t, await as(app, member).patch('/settings', { enable_desktop_notifications: true }))
  })

  t.test('the settings dialog keeps Tab inside while open and gives focus back to its opener; the profile card too', async (t) => {
    const opener = page.getByRole('button', { name: 'Settings' })
    await opener.focus()
    await page.keyboard.press('Enter')
    await settings.waitFor()
    const inDialog = () => page.evaluate(() => document.querySelector('[role="dialog"]')?.contains(document.activeElement) === true)
    await page.keyboard.press('Shift+Tab')
    t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Close', 'Shift+Tab from the start wraps to the last control')
    await page.keyboard.press('Tab')
    t.ok(await inDialog(), 'Tab from the last control wraps to the first')
    for (let i = 0; i < 5; i++) await page.keyboard.press('Shift+Tab')
    t.ok(await inDialog(), 'still inside')
    await page.keyboard.press('Escape')
    await settings.waitFor({ state: 'detached' })
    t.ok(await opener.evaluate((el) => el === document.activeElement), 'focus returns to the Settings button')

    const sender = row.locator('button.sender')
    await sender.focus()
    await page.keyboard.press('Enter')
    const card = page.locator('.profile-card')
    await card.waitFor()
    t.ok(await card.evaluate((el) => el === document.activeElement), 'the card takes focus')
    await page.keyboard.press('Escape')
    await card.waitFor({ state: 'detached' })
    t.ok(await sender.evaluate((el) => el === document.activeElement), "focus returns to the sender's name")
  })

  t.test('the profile: full name, status text and away, alert words, saved on the server', async (t) => {
    t.teardown(async () => {
      await as(app, member).patch('/settings', { full_name: member.fullName })
      await as(app, member).post('/users/me/status', { status_text: '', away: false })
    })
    await page.goto(`${origin}/#channel/${general.id}/topic/faces`)
    await row.waitFor({ timeout: 10_000 })
    await page.getByRole('button', { name: 'Settings' }).click()
    await settings.getByLabel('Full name', { exact: true }).fill('Ann Renamed')
    await settings.getByLabel('Status text', { exact: true }).fill('on a train')
    await settings.getByLabel('Away', { exact: true }).check()
    const before = (expectSuccess(t, await as(app, member).get('/users/me/alert_words')).alert_words as string[]).join(', ')
    t.ok(before, `an earlier subtest left alert words (${before})`)
    const words = settings.getByLabel('Alert words (comma separated)', { exact: true })
    t.equal(await words.inputValue(), before, "the field lists the user's alert words")
    await words.fill('pelican, heron')
    await settings.getByRole('button', { name: 'Save' }).click()
    await settings.getByRole('status').filter({ hasText: 'Saved' }).first().waitFor({ timeout: 10_000 })
    t.equal((await services.prisma.user.findUniqueOrThrow({ where: { id: member.id } })).fullName, 'Ann Renamed', 'the full name')
    const state = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['user_status', 'alert_words'], event_types: ['heartbeat'] }))
    t.match((state.user_status as Record<string, unknown>)[String(member.id)], { status_text: 'on a train', away: true }, 'the status text and away')
    t.same([...(state.alert_words as string[])].sort(), ['heron', 'pelican'], 'the alert words: those taken out of the field removed')
    await settings.getByRole('button', { name: 'Close' }).click()
    await row.locator('.sender', { hasText: 'Ann Renamed' }).waitFor({ timeout: 10_000 })
    t.pass("the new name on the user's messages already shown")
  })

  t.test('display: the dark theme (axe-core on it) and 24-hour time', async (t) => {
    t.teardown(async () => void (await as(app, member).patch('/settings', { color_scheme: 1, twenty_four_hour_time: false })))
    const userSettings = () => services.prisma.userSettings.findUniqueOrThrow({ where: { userId: member.id } })
    await page.goto(`${origin}/#channel/${general.id}/topic/faces`)
    await row.waitFor({ timeout: 10_000 })
    const time = row.locator('.time')
    t.match(await time.textContent(), /[AP]M/, 'a 12-hour time by default')
    await page.getByRole('button', { name: 'Settings' }).click()
    await settings.getByLabel('Theme').selectOption({ label: 'Dark' })
    await eventually('the dark theme saved', userSettings, { until: (s) => s.colorScheme === 2 })
    // Drawn when the user_settings event reaches the page, which may be after the row is saved.
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark', undefined, { timeout: 10_000 })
    t.pass('the page is drawn dark')
    t.same(await seriousViolations(page), [], 'axe-core on the dark theme, settings open')
    await settings.getByLabel('Use 24-hour time', { exact: true }).check()
    await eventually('24-hour time saved', userSettings, { until: (s) => s.twentyFourHourTime })
    await settings.getByRole('button', { name: 'Close' }).click()
    await eventually('the times shown in 24 hours', () => time.textContent(), { until: (text) => /^\d{1,2}:\d{2}$/.test(text?.trim() ?? '') })
    t.same(await seriousViolations(page), [], 'axe-core on the dark theme, a message view')
    await page.screenshot({ path: path.join(shots, 'settings-dark.png') })
  })

  t.test("a channel's pin and colour, saved on the server and shown in the navigation", async (t) => {
    const subscription = () => services.prisma.subscription.findFirstOrThrow({ where: { userId: member.id, streamId: general.id } })
    const navChannels = () => page.$$eval('nav a[href^="#channel/"]:not([href*="/topic/"])', (links) => links.map((a) => a.getAttribute('href')))
    t.not((await navChannels())[0], `#channel/${general.id}`, 'not first before pinning')
    await page.getByRole('button', { name: 'Settings' }).click()
    const item = settings.locator('.channel-settings > li').filter({ hasText: /^\s*#general\s/ })
    await item.getByLabel('Pin to top', { exact: true }).check()
    await eventually('pinned on the server', subscription, { until: (s) => s.pinToTop })
    await item.getByLabel('Colour').fill('#123456')
    await eventually('the colour saved', subscription, { until: (s) => s.color === '#123456' })
    await settings.getByRole('button', { name: 'Close' }).click()
    await eventually('the pinned channel first in the navigation', navChannels, { until: (hrefs) => hrefs[0] === `#channel/${general.id}` })
    t.match(await page.locator(`nav a[href="#channel/${general.id}"] .swatch`).getAttribute('style'), /rgb\(18, 52, 86\)|#123456/, 'its swatch in the new colour')
  })

  t.test('no errors in the page', async (t) => {
    t.same(errors, [])
  })

  t.test('as an administrator: the organization in the header, edit limits, refused edits', async (t) => {
    const admin = await fx.user('admin')
    const adminSent = async (content: string) => expectSuccess(t, await as(app, admin).post('/messages', { type: 'stream', to: general.id, topic: 'limits', content })).id as number
    const old = await adminSent('written long ago')
    const recent = await adminSent('written just now')
    await services.prisma.message.update({ where: { id: old }, data: { dateSent: new Date(Date.now() - 2 * 3600_000) } })
    expectSuccess(t, await as(app, admin).patch('/realm', { message_content_edit_limit_seconds: 3600 }))
    const early = await fx.newUser({ fullName: 'Early Leaver' })
    expectSuccess(t, await as(app, admin).delete(`/users/${early.id}`))
    const { page: adminPage, errors: adminErrors } = await openApp(t, browser, origin, admin, await givePassword(services, admin))
    const brand = adminPage.locator('header h1')
    t.equal(await brand.textContent(), fx.realm.name, "the organization's name in the header")
    expectSuccess(t, await as(app, admin).patch('/realm', { name: 'Renamed live' }))
    await eventually('the rename arrives', () => brand.textContent(), { until: (text) => text === 'Renamed live' })

    await adminPage.goto(`${origin}/#channel/${general.id}/topic/limits`)
    const oldRow = adminPage.locator(`[data-id="${old}"]`)
    const recentRow = adminPage.locator(`[data-id="${recent}"]`)
    await recentRow.waitFor({ timeout: 10_000 })
    // The actions show on hover, which also checks the limits again.
    await oldRow.hover()
    t.equal(await oldRow.locator('.actions button[aria-label="Edit"]').count(), 0, 'no Edit past the limit')
    t.ok(await oldRow.getByRole('button', { name: 'Quote' }).isVisible(), 'the other actions are there')
    await recentRow.hover()
    t.equal(await recentRow.getByRole('button', { name: 'Edit' }).count(), 1, 'Edit within the limit')
    await recentRow.getByRole('button', { name: 'Edit' }).click()
    const box = recentRow.getByRole('textbox', { name: 'Edit' })
    await box.fill('an edit the server refuses')
    expectSuccess(t, await as(app, admin).patch('/realm', { allow_message_editing: false }))
    await eventually('editing turned off arrives', () => recentRow.locator('.actions button[aria-label="Edit"]').count(), { until: (n) => n === 0 })
    await recentRow.getByRole('button', { name: 'Save' }).click()
    const alert = recentRow.getByRole('alert')
    await alert.waitFor({ timeout: 10_000 })
    t.match(await alert.textContent(), /^Not done: \S/, "the server's error, in the row")
    t.ok(await box.isVisible(), 'the edit stays open')
    await recentRow.screenshot({ path: path.join(shots, 'edit-refused.png') })
    expectSuccess(t, await as(app, admin).patch('/realm', { allow_message_editing: true }))

    // People deactivated before the page loaded, confirmations, invitations.
    await adminPage.getByRole('button', { name: 'Settings' }).click()
    const adminSettings = adminPage.getByRole('dialog', { name: 'Settings' })
    await adminSettings.getByRole('button', { name: 'Reactivate Early Leaver' }).click()
    await eventually('Early Leaver reactivated', () => services.prisma.user.findUniqueOrThrow({ where: { id: early.id } }), { until: (u) => u.isActive })
    await adminSettings.getByRole('button', { name: 'Deactivate Early Leaver' }).waitFor({ timeout: 10_000 })
    t.pass('a user deactivated before the page loaded is reactivated, and can be deactivated again')
    await adminSettings.getByRole('button', { name: 'Deactivate Early Leaver' }).click()
    const sure = adminSettings.getByRole('group', { name: 'Are you sure?' })
    t.ok(await adminSettings.getByRole('button', { name: 'Yes, deactivate' }).evaluate((b) => b === document.activeElement), 'the confirmation holds the focus')
    t.same(await seriousViolations(adminPage), [], 'axe-core on the administration settings, confirming')
    await sure.getByRole('button', { name: 'Cancel' }).click()
    t.equal(await sure.count(), 0)
    t.ok((await services.prisma.user.findUniqueOrThrow({ where: { id: early.id } })).isActive, 'cancelled: still active')
    t.ok(await adminSettings.getByRole('button', { name: 'Deactivate Early Leaver' }).evaluate((b) => b === document.activeElement), 'the focus back on the button')
    await adminPage.keyboard.press('Enter')
    await adminPage.keyboard.press('Enter')
    await eventually('Early Leaver deactivated after confirming by keyboard', () => services.prisma.user.findUniqueOrThrow({ where: { id: early.id } }), { until: (u) => !u.isActive })

    await adminSettings.getByLabel('Users join as').selectOption({ label: 'Moderator' })
    await adminSettings.getByLabel('Invitation expires after').selectOption({ label: '3 days' })
    await adminSettings.getByRole('checkbox', { name: '#general' }).check()
    await adminSettings.getByRole('button', { name: 'Create invitation link' }).click()
    const linkBox = adminSettings.getByRole('textbox', { name: 'Invitation link' })
    await linkBox.waitFor({ timeout: 10_000 })
    const link = await linkBox.inputValue()
    t.match(link, /\/join\/\w+/, 'the link to copy')
    const made = await services.prisma.multiuseInvite.findFirstOrThrow({ where: { realmId: fx.realm.id }, orderBy: { id: 'desc' } })
    t.match(made, { inviteAs: 300, streamIds: [general.id], includeRealmDefaultSubscriptions: true })
    t.ok(Math.abs(made.expiresAt!.getTime() - Date.now() - 3 * 86_400_000) < 600_000, 'expires in 3 days')
    await adminSettings.getByRole('group', { name: 'Invite users' }).screenshot({ path: path.join(shots, 'settings-invite.png') })
    const joinPage = await (await browser.newContext()).newPage()
    t.teardown(() => joinPage.context().close().catch(() => undefined))
    const joined = await joinPage.goto(link.replace(/^https?:\/\/[^/]+/, origin))
    t.equal(joined?.status(), 200, 'the link opens the join page')
    t.equal(await joinPage.locator('form[action^="/join/"]').count(), 1, 'with its form')

    await adminSettings.getByLabel('Users join as').selectOption({ label: 'Guest' })
    await adminSettings.getByLabel('Invite (addresses, comma separated)').fill('newbie@example.org')
    await adminSettings.getByRole('button', { name: 'Invite', exact: true }).click()
    const invitation = await eventually('the address invitation', () => services.prisma.invitation.findFirst({ where: { realmId: fx.realm.id, email: 'newbie@example.org' } }), { until: (i) => i !== null })
    t.match(invitation, { inviteAs: 600, streamIds: [general.id] }, 'the role and the channels chosen')
    t.same(adminErrors, [], 'no errors in the administrator page')
  })
})
