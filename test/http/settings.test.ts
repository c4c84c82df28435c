import t, { type Test } from 'tap'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { applyCookies, cookieHeader } from '../support/browser.js'
import type { CapturedBusItem as BusItem } from '../support/events.js'
import type { Services } from '../../src/services.js'
import type { User } from '../../src/db/index.js'
import { readOutbox } from '../../src/mail/outbox.js'
import { verifyPassword } from '../../src/domain/credentials.js'
import { busItemsDuring } from '../support/events.js'

/** Items published while `fn` runs (the bus delivers on a microtask). */
const published = async (services: Services, fn: () => Promise<unknown>): Promise<BusItem[]> => (await busItemsDuring(services, fn)).items

t.test('PATCH /settings', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'roost-settings-'))
  const { app, fx, services } = await buildTestApp(t, { config: { dataDir } })
  const settingsOf = (userId: number) => services.prisma.userSettings.findUniqueOrThrow({ where: { userId } })

  t.test('changes a setting and answers with the bare envelope', async (t) => {
    const member = await fx.newUser()
    const body = expectSuccess(t, await as(app, member).patch('/settings', { twenty_four_hour_time: true, color_scheme: 2 }))
    t.same(Object.keys(body).sort(), ['msg', 'result'])
    const s = await settingsOf(member.id)
    t.equal(s.twentyFourHourTime, true)
    t.equal(s.colorScheme, 2)
  })

  t.test('accepts every enumerated value of every setting', async (t) => {
    const member = await fx.newUser()
    const cases: Record<string, unknown> = {
      web_home_view: 'recent_topics',
      emojiset: 'google-blob',
      demote_inactive_streams: 3,
      user_list_style: 1,
      web_animate_image_previews: 'never',
      web_stream_unreads_count_display_policy: 3,
      web_mark_read_on_scroll_policy: 2,
      web_channel_default_view: 2,
      desktop_icon_count_display: 4,
      notification_sound: 'ding',
      email_notifications_batching_period_seconds: 600,
      default_language: 'de',
      email_address_visibility: 3,
      timezone: 'Europe/Berlin',
      web_font_size_px: 14,
      web_line_height_percent: 122,
      dense_mode: true,
    }
    expectSuccess(t, await as(app, member).patch('/settings', cases))
    const s = await settingsOf(member.id)
    t.equal(s.webHomeView, 'recent_topics')
    t.equal(s.emojiset, 'google-blob')
    t.equal(s.notificationSound, 'ding')
    t.equal(s.defaultLanguage, 'de')
    t.equal(s.denseMode, true)
    t.equal((await fx.refresh(member)).timezone, 'Europe/Berlin')
  })

  t.test('rejects values outside each setting’s set, naming the parameter', async (t) => {
    const member = await fx.newUser()
    const bad: [Record<string, unknown>, string][] = [
      [{ color_scheme: 7 }, 'Invalid color_scheme'],
      [{ color_scheme: 'dark' }, 'color_scheme is not an integer'],
      [{ web_home_view: 'stream' }, 'Invalid web_home_view'],
      [{ emojiset: 'apple' }, 'Invalid emojiset'],
      [{ demote_inactive_streams: 0 }, 'Invalid demote_inactive_streams'],
      [{ user_list_style: 4 }, 'Invalid user_list_style'],
      [{ web_animate_image_previews: 'sometimes' }, 'Invalid web_animate_image_previews'],
      [{ web_stream_unreads_count_display_policy: 9 }, 'Invalid web_stream_unreads_count_display_policy'],
      [{ web_mark_read_on_scroll_policy: 4 }, 'Invalid web_mark_read_on_scroll_policy'],
      [{ web_channel_default_view: 3 }, 'Invalid web_channel_default_view'],
      [{ desktop_icon_count_display: 5 }, 'Invalid desktop_icon_count_display'],
      [{ email_address_visibility: 6 }, 'Invalid email_address_visibility'],
      [{ default_language: 'xx' }, 'Invalid default_language'],
      [{ timezone: 'Mars/Olympus_Mons' }, 'Invalid timezone'],
      [{ notification_sound: 'kazoo' }, "Invalid notification sound 'kazoo'"],
      [{ email_notifications_batching_period_seconds: 0 }, 'Invalid email batching period: 0 seconds'],
      [{ email_notifications_batching_period_seconds: 604801 }, 'Invalid email batching period: 604801 seconds'],
      [{ dense_mode: 'maybe' }, 'dense_mode is not a boolean'],
      [{ dense_mode: true, web_font_size_px: 16 }, "Incompatible values for 'dense_mode' and 'web_font_size_px'."],
    ]
    for (const [params, msg] of bad) {
      expectError(t, await as(app, member).patch('/settings', params), { code: 'BAD_REQUEST', status: 400, msg })
    }
  })

  t.test('changes nothing when one of several values is bad', async (t) => {
    const member = await fx.newUser()
    const items = await published(services, async () => {
      expectError(t, await as(app, member).patch('/settings', { twenty_four_hour_time: true, color_scheme: 9 }), { code: 'BAD_REQUEST' })
    })
    t.equal((await settingsOf(member.id)).twentyFourHourTime, false)
    t.same(items, [])
  })

  t.test('lists parameters it does not support', async (t) => {
    const member = await fx.newUser()
    const res = await as(app, member).patch('/settings', { twenty_four_hour_time: true, colour: 'red' })
    t.same(expectSuccess(t, res).ignored_parameters_unsupported, ['colour'])
  })

  t.test('tells the user’s clients about each changed setting, and only changed ones', async (t) => {
    const member = await fx.newUser()
    const items = await published(services, () => as(app, member).patch('/settings', { dense_mode: true, enter_sends: false, default_language: 'fr' }))
    t.same(
      items.map((i) => [i.userIds, i.event]),
      [
        [[member.id], { type: 'user_settings', op: 'update', property: 'default_language', value: 'fr', language_name: 'French' }],
        [[member.id], { type: 'user_settings', op: 'update', property: 'dense_mode', value: true }],
      ],
    )
  })

  t.test('sends a time zone change to the user and to everyone who can see them', async (t) => {
    const member = await fx.newUser()
    const items = await published(services, () => as(app, member).patch('/settings', { timezone: 'Asia/Kolkata' }))
    t.match(items[0], { userIds: [member.id], event: { type: 'user_settings', property: 'timezone', value: 'Asia/Kolkata' } })
    const update = items.find((i) => i.event.type === 'realm_user')
    t.same(update?.event, { type: 'realm_user', op: 'update', person: { email: member.email, user_id: member.id, timezone: 'Asia/Kolkata' } })
    t.ok(update?.userIds.includes(fx.users.owner.id))
    t.ok(update?.userIds.includes(member.id))
  })

  t.test('renames the user and tells the realm', async (t) => {
    const member = await fx.newUser()
    const items = await published(services, () => as(app, member).patch('/settings', { full_name: '  Nina New  ' }))
    t.equal((await fx.refresh(member)).fullName, 'Nina New')
    t.same(items.map((i) => i.event), [{ type: 'realm_user', op: 'update', person: { user_id: member.id, full_name: 'Nina New' } }])
    expectError(t, await as(app, member).patch('/settings', { full_name: 'x' }), { code: 'BAD_REQUEST', msg: 'Name too short!' })
  })

  t.test('ignores a name change where the realm disables them for non-administrators', async (t) => {
    const member = await fx.newUser({ fullName: 'Fixed Name' })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { nameChangesDisabled: true } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { nameChangesDisabled: false } }))
    expectSuccess(t, await as(app, member).patch('/settings', { full_name: 'Other Name' }))
    t.equal((await fx.refresh(member)).fullName, 'Fixed Name')
  })

  t.test('the user settings of upstream 10.0: allow_private_data_export (293), web_suggest_update_timezone (329), hide_ai_features (350)', async (t) => {
    const member = await fx.newUser()
    const state = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['user_settings'], client_capabilities: { user_settings_object: true } }))
    t.match(state.user_settings, { allow_private_data_export: false, web_suggest_update_timezone: true, hide_ai_features: false })
    const items = await published(services, () => as(app, member).patch('/settings', { allow_private_data_export: true, web_suggest_update_timezone: false, hide_ai_features: true }))
    t.same(
      items.filter((i) => i.event.type === 'user_settings').map((i) => i.event),
      [
        { type: 'user_settings', op: 'update', property: 'web_suggest_update_timezone', value: false },
        { type: 'user_settings', op: 'update', property: 'hide_ai_features', value: true },
        { type: 'user_settings', op: 'update', property: 'allow_private_data_export', value: true },
      ],
    )
    const after = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['user_settings'], client_capabilities: { user_settings_object: true } }))
    t.match(after.user_settings, { allow_private_data_export: true, web_suggest_update_timezone: false, hide_ai_features: true })
    expectError(t, await as(app, member).patch('/settings', { hide_ai_features: 'maybe' }), { code: 'BAD_REQUEST', status: 400 })
  })

  t.test('changes the password only with the right old password', async (t) => {
    const member = await fx.newUser({ password: 'old-secret-1' })
    expectError(t, await as(app, member).patch('/settings', { new_password: 'new-secret-2' }), { code: 'BAD_REQUEST', msg: 'Wrong password!' })
    expectError(t, await as(app, member).patch('/settings', { old_password: 'nope', new_password: 'new-secret-2' }), { code: 'BAD_REQUEST', msg: 'Wrong password!' })
    expectError(t, await as(app, member).patch('/settings', { old_password: 'old-secret-1', new_password: 'abc' }), { code: 'BAD_REQUEST', msg: 'New password is too weak!' })
    // Register's password_max_length (level 338) is the longest accepted.
    const realmState = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm'] }))
    const max = realmState.password_max_length as number
    t.equal(max, 100)
    // Level 369: no navigation tour video, as a server without one configured.
    t.equal(realmState.navigation_tour_video_url, null)
    expectError(t, await as(app, member).patch('/settings', { old_password: 'old-secret-1', new_password: 'x'.repeat(max + 1) }), { code: 'BAD_REQUEST', msg: 'New password is too long!' })
    expectSuccess(t, await as(app, member).patch('/settings', { old_password: 'old-secret-1', new_password: 'new-secret-2' }))
    const hash = (await fx.refresh(member)).passwordHash
    t.ok(await verifyPassword(hash, 'new-secret-2'))
    t.notOk(await verifyPassword(hash, 'old-secret-1'))
    // The API key keeps working.
    expectSuccess(t, await as(app, member).patch('/settings', { enter_sends: true }))
  })

  t.test('deletes server-side drafts when draft synchronization is turned off', async (t) => {
    const member = await fx.newUser()
    await services.prisma.draft.create({ data: { userId: member.id, type: '', content: 'hello', lastEditTime: new Date() } })
    expectSuccess(t, await as(app, member).patch('/settings', { enable_drafts_synchronization: false }))
    t.equal(await services.prisma.draft.count({ where: { userId: member.id } }), 0)
  })

  t.test('rejects bots', async (t) => {
    expectError(t, await as(app, fx.users.bot).patch('/settings', { enter_sends: true }), {
      code: 'BAD_REQUEST',
      msg: 'This endpoint does not accept bot requests.',
    })
  })

  t.test('keeps the deprecated /settings/display and /settings/notifications paths', async (t) => {
    const member = await fx.newUser()
    expectSuccess(t, await as(app, member).patch('/settings/display', { high_contrast_mode: true }))
    expectSuccess(t, await as(app, member).patch('/settings/notifications', { enable_sounds: false }))
    const s = await settingsOf(member.id)
    t.equal(s.highContrastMode, true)
    t.equal(s.enableSounds, false)
  })

  t.test('changes the email address only once the link in the confirmation mail is opened', async (t) => {
    const member = await fx.newUser({ password: 'pw-123456' })
    const newEmail = `moved-${member.id}@elsewhere.example.org`
    const body = expectSuccess(t, await as(app, member).patch('/settings', { email: newEmail }))
    t.equal(body.account_email, 'Check your email for a confirmation link. ')
    t.equal((await fx.refresh(member)).deliveryEmail, member.deliveryEmail)
    const mail = (await readOutbox(dataDir)).find((m) => m.includes(`To: ${newEmail}`))
    t.ok(mail, 'a confirmation mail is in the outbox')
    const link = /(http:\/\/\S+\/accounts\/confirm_new_email\/(\w+))/.exec(mail ?? '')
    t.ok(link)
    const path = new URL(link?.[1] ?? 'http://x/').pathname
    const host = fx.host
    const items = await published(services, async () => {
      const res = await app.inject({ method: 'GET', url: path, headers: { host: fx.host } })
      t.equal(res.statusCode, 303, 'the browser is logged in and sent to the app')
      t.equal(res.headers.location, '/')
      const cookies = applyCookies({}, res)
      t.equal(bodyOf(await app.inject({ method: 'GET', url: '/json/users/me', headers: { host: fx.host, cookie: cookieHeader(cookies) } })).delivery_email, newEmail)
    })
    const after = await fx.refresh(member)
    t.equal(after.deliveryEmail, newEmail)
    t.equal(after.email, newEmail)
    t.ok(items.some((i) => i.event.type === 'realm_user' && (i.event.person as { new_email?: string }).new_email === newEmail))
    t.ok(items.some((i) => i.userIds.includes(member.id) && (i.event.person as { delivery_email?: string }).delivery_email === newEmail))
    // The link works once.
    t.equal((await app.inject({ method: 'GET', url: path, headers: { host } })).statusCode, 404)
    t.equal((await app.inject({ method: 'GET', url: '/accounts/confirm_new_email/nosuchkey', headers: { host } })).statusCode, 404)
  })

  /** Asks for `member`'s address to become `newEmail`; the path of the link in the confirmation mail. */
  const requestEmailChange = async (t: Test, member: User, newEmail: string): Promise<string> => {
    expectSuccess(t, await as(app, member).patch('/settings', { email: newEmail }))
    const mail = (await readOutbox(dataDir)).find((m) => m.includes(`To: ${newEmail}`))
    const link = /http:\/\/\S+(\/accounts\/confirm_new_email\/\w+)/.exec(mail ?? '')
    t.ok(link, `a confirmation mail to ${newEmail}`)
    return link?.[1] ?? '/accounts/confirm_new_email/missing'
  }
  const openLink = (path: string, host: string) => app.inject({ method: 'GET', url: path, headers: { host } })

  t.test("an email-change link works only on the issuing organization's host", async (t) => {
    const other = await makeFixture(services)
    const member = await fx.newUser()
    const newEmail = `host-bound-${member.id}@elsewhere.example.org`
    const path = await requestEmailChange(t, member, newEmail)
    const elsewhere = await openLink(path, other.host)
    t.equal(elsewhere.statusCode, 404, "another organization's host gets the error page")
    t.match(elsewhere.headers['content-type'], /^text\/html/)
    t.notOk(elsewhere.headers['set-cookie'], 'and no session')
    t.equal((await fx.refresh(member)).deliveryEmail, member.deliveryEmail, 'the address is unchanged')
    t.equal((await openLink(path, fx.host)).statusCode, 303, 'the link still works on its own host')
    t.equal((await fx.refresh(member)).deliveryEmail, newEmail)
  })

  t.test('an older pending link is void once a newer change is requested', async (t) => {
    const member = await fx.newUser()
    const first = await requestEmailChange(t, member, `first-${member.id}@elsewhere.example.org`)
    const second = await requestEmailChange(t, member, `second-${member.id}@elsewhere.example.org`)
    t.equal((await openLink(first, fx.host)).statusCode, 404)
    t.equal((await fx.refresh(member)).deliveryEmail, member.deliveryEmail, 'the address is unchanged')
    t.equal((await openLink(second, fx.host)).statusCode, 303)
    t.equal((await fx.refresh(member)).deliveryEmail, `second-${member.id}@elsewhere.example.org`)
  })

  t.test('an older pending link is void once a change was confirmed', async (t) => {
    const member = await fx.newUser()
    const first = await requestEmailChange(t, member, `early-${member.id}@elsewhere.example.org`)
    const second = await requestEmailChange(t, member, `late-${member.id}@elsewhere.example.org`)
    t.equal((await openLink(second, fx.host)).statusCode, 303)
    t.equal((await openLink(first, fx.host)).statusCode, 404)
    t.equal((await fx.refresh(member)).deliveryEmail, `late-${member.id}@elsewhere.example.org`, 'the confirmed address stays')
  })

  t.test('a link is void once the address it was requested from changed another way', async (t) => {
    const member = await fx.newUser()
    const path = await requestEmailChange(t, member, `pending-${member.id}@elsewhere.example.org`)
    await services.prisma.user.update({ where: { id: member.id }, data: { deliveryEmail: `changed-${member.id}@elsewhere.example.org` } })
    t.equal((await openLink(path, fx.host)).statusCode, 404)
    t.equal((await fx.refresh(member)).deliveryEmail, `changed-${member.id}@elsewhere.example.org`)
  })

  t.test('refuses an email address in use, an invalid one, or a change the realm disables', async (t) => {
    const member = await fx.newUser()
    expectError(t, await as(app, member).patch('/settings', { email: fx.users.admin.deliveryEmail }), { code: 'BAD_REQUEST', msg: `Email '${fx.users.admin.deliveryEmail}' already in use` })
    expectError(t, await as(app, member).patch('/settings', { email: 'not an address' }), { code: 'BAD_REQUEST' })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { emailChangesDisabled: true } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { emailChangesDisabled: false } }))
    expectError(t, await as(app, member).patch('/settings', { email: 'x@y.example.org' }), {
      code: 'BAD_REQUEST',
      msg: 'Email address changes are disabled in this organization.',
    })
  })

  t.test('turning presence off tells everyone the user is idle', async (t) => {
    const member = await fx.newUser()
    await as(app, member).post('/users/me/presence', { status: 'active' })
    const items = await published(services, () => as(app, member).patch('/settings', { presence_enabled: false }))
    t.match(items[0]?.event, { type: 'user_settings', property: 'presence_enabled', value: false })
    const presence = items.find((i) => i.event.type === 'presence')
    t.match(presence?.event, { type: 'presence', user_id: member.id, presence: { website: { status: 'idle' } } })
  })

  t.test('turning presence back on tells everyone the user is active now', async (t) => {
    const member = await fx.newUser()
    await as(app, member).patch('/settings', { presence_enabled: false })
    const items = await published(services, () => as(app, member).patch('/settings', { presence_enabled: true }))
    const presence = items.find((i) => i.event.type === 'presence')
    const timestamp = Number((presence?.event.presence as { website?: { timestamp?: number } } | undefined)?.website?.timestamp)
    t.same(presence?.event.presence, { website: { client: 'website', status: 'active', timestamp, pushable: false } })
    t.ok(Math.abs(timestamp - Date.now() / 1000) < 5, 'dated now')
    t.ok(presence?.userIds.includes(fx.users.owner.id), 'everyone is told')
    // The register entry agrees with the event.
    const body = expectSuccess(t, await as(app, fx.users.owner).post('/register', { slim_presence: true, fetch_event_types: ['presence'] }))
    t.same((body.presences as Record<string, unknown>)[String(member.id)], { active_timestamp: timestamp, idle_timestamp: timestamp })
  })
})
