// Missed-message emails through the HTTP API, received by a real SMTP server
// on loopback and parsed with mailparser: who is emailed for what (upstream's
// triggers, settings and mutes), batching, read and deleted messages, the
// unsubscribe link, and a mail server that fails.
import t from 'tap'
import type { ParsedMail } from 'mailparser'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { startSmtpPeer } from '../support/smtp-peer.js'
import { eventually } from '../support/eventually.js'
import { SmtpMailer, type Mailer } from '../../src/mail/outbox.js'
import { deliverMissedMessageEmails, startMissedMessageEmails } from '../../src/notifications/delivery.js'
import type { User } from '../../src/db/index.js'

t.test('missed-message emails', async (t) => {
  const peer = await startSmtpPeer()
  t.teardown(() => peer.close())
  const { app, fx, services } = await buildTestApp(t, { config: { smtpUrl: peer.url } })
  const realmId = fx.realm.id
  const owner = await fx.user('owner')
  const smtp = new SmtpMailer(peer.url)

  /** Makes every pending row of the realm due, runs delivery until nothing is left, returns the mails received meanwhile. */
  const flush = async (mailer: Mailer = smtp): Promise<ParsedMail[]> => {
    const before = peer.received.length
    await services.prisma.$executeRaw`UPDATE missed_message_email SET due_at = now() - interval '1 minute' WHERE realm_id = ${realmId} AND attempts = 0`
    while ((await deliverMissedMessageEmails(services, { log: app.log, realmIds: [realmId], retryBaseMs: 60_000 }, mailer)) > 0) {
      // until nothing is due
    }
    return peer.received.slice(before)
  }
  const addressee = (m: ParsedMail): string | undefined => (m.to && !Array.isArray(m.to) ? m.to.value[0]?.address : undefined)
  /** The mails among `mails` addressed to `user` (other tests' users may be emailed too). */
  const to = (mails: ParsedMail[], user: User): ParsedMail[] => mails.filter((m) => addressee(m) === user.deliveryEmail)
  const pending = async (userId: number) => services.prisma.missedMessageEmail.count({ where: { userId } })
  const dm = async (from: User, to: User, content: string): Promise<number> =>
    expectSuccess(t, await as(app, from).post('/messages', { type: 'direct', to: [to.id], content })).id as number
  const say = async (from: User, topic: string, content: string): Promise<number> =>
    expectSuccess(t, await as(app, from).post('/messages', { type: 'channel', to: fx.streams.general.id, topic, content })).id as number
  const recipient = async (name: string): Promise<User> => {
    const user = await fx.newUser({ fullName: name })
    expectSuccess(t, await as(app, user).post('/users/me/subscriptions', { subscriptions: [{ name: fx.streams.general.name }] }))
    return user
  }

  t.test('an email for a group mention names the group; a personal mention names none', async (t) => {
    const bob = await recipient('Bob Group Mail')
    const admin = await fx.user('admin')
    const name = `mailers-${realmId}`
    expectSuccess(t, await as(app, owner).post('/user_groups/create', { name, description: 'email test', members: [bob.id, admin.id] }))
    await say(owner, 'group call', `@*${name}* standup in five`)
    const [mail] = to(await flush(), bob)
    t.match(mail?.text, `You are receiving this because @${name} was mentioned.`)
    t.match(String(mail?.html), `@${name} was mentioned.`)
    await say(owner, 'group call 2', `@**${bob.fullName}** and @*${name}*`)
    const [personal] = to(await flush(), bob)
    t.ok(personal)
    t.notMatch(personal?.text, 'was mentioned.')
  })

  t.test('realm_name_in_email_notifications_policy puts the organization name in the subject as upstream does', async (t) => {
    const bob = await recipient('Bob Subject')
    expectError(t, await as(app, bob).patch('/settings', { realm_name_in_email_notifications_policy: 4 }), { code: 'BAD_REQUEST', status: 400, msg: /realm_name_in_email_notifications_policy/ })
    expectSuccess(t, await as(app, bob).patch('/settings', { realm_name_in_email_notifications_policy: 2 }))
    await dm(owner, bob, 'always')
    t.same(to(await flush(), bob).map((m) => m.subject), [`[${fx.realm.name}] DMs with ${owner.fullName}`], 'Always')
    expectSuccess(t, await as(app, bob).patch('/settings', { realm_name_in_email_notifications_policy: 1 }))
    await dm(owner, bob, 'automatic, one organization')
    t.same(to(await flush(), bob).map((m) => m.subject), [`DMs with ${owner.fullName}`], 'Automatic, with one account')
    // The same address in a second organization: Automatic now names the organization.
    const other = await buildTestApp(t)
    await other.fx.newUser({ fullName: 'Bob Elsewhere', email: bob.deliveryEmail })
    await dm(owner, bob, 'automatic, two organizations')
    t.same(to(await flush(), bob).map((m) => m.subject), [`[${fx.realm.name}] DMs with ${owner.fullName}`], 'Automatic, with two accounts')
    expectSuccess(t, await as(app, bob).patch('/settings', { realm_name_in_email_notifications_policy: 3 }))
    await dm(owner, bob, 'never')
    t.same(to(await flush(), bob).map((m) => m.subject), [`DMs with ${owner.fullName}`], 'Never')
  })

  t.test('a direct message to someone away is emailed with its content, links, sender and organization', async (t) => {
    const bob = await recipient('Bob Away')
    const id = await dm(owner, bob, 'Lunch at **noon**?')
    const [mail, ...more] = to(await flush(), bob)
    t.equal(more.length, 0)
    t.ok(mail)
    if (!mail) return
    t.equal(addressee(mail), bob.deliveryEmail)
    t.equal(mail.from?.value[0]?.name, `${owner.fullName} (${fx.realm.name})`)
    t.match(mail.from?.value[0]?.address, /^noreply@/)
    t.equal(mail.subject, `DMs with ${owner.fullName}`)
    t.match(mail.text, 'Lunch at **noon**?')
    t.match(mail.text, `/#narrow/dm/${owner.id}-dm/near/${id}`)
    t.match(String(mail.html), '<strong>noon</strong>')
    t.match(String(mail.html), `/#narrow/dm/${owner.id}-dm/near/${id}`)
    const unsubscribe = mail.headerLines.find((h) => h.key === 'list-unsubscribe')?.line ?? ''
    t.match(unsubscribe, /\/accounts\/unsubscribe\/missed_messages\//)
    t.equal(await pending(bob.id), 0, 'sent rows are gone')
  })

  t.test('two direct messages within the batching period make one email', async (t) => {
    const bob = await recipient('Bob Batch')
    await dm(owner, bob, 'first of two')
    await dm(owner, bob, 'second of two')
    const mails = to(await flush(), bob)
    t.equal(mails.length, 1)
    t.match(mails[0]?.text, /first of two[\s\S]*second of two/)
  })

  t.test('conversations get an email each', async (t) => {
    const bob = await recipient('Bob Two Conversations')
    await dm(owner, bob, 'a direct one')
    await say(owner, 'plans', `@**${bob.fullName}** see this`)
    const mails = to(await flush(), bob)
    t.same(mails.map((m) => m.subject).sort(), [`#${fx.streams.general.name} > plans`, `DMs with ${owner.fullName}`].sort())
  })

  t.test('the row waits for the batching period of the user', async (t) => {
    const bob = await recipient('Bob Waits')
    expectSuccess(t, await as(app, bob).patch('/settings', { email_notifications_batching_period_seconds: 600 }))
    await dm(owner, bob, 'later')
    const row = await services.prisma.missedMessageEmail.findFirst({ where: { userId: bob.id } })
    t.ok(row && row.dueAt.getTime() - row.createdAt.getTime() === 600_000)
    t.equal(await deliverMissedMessageEmails(services, { log: app.log, realmIds: [realmId] }, smtp), 0, 'nothing due yet')
    await flush()
  })

  t.test('a message moved to another topic before the email is sent with that topic', async (t) => {
    const bob = await recipient('Bob Moved')
    const first = await say(owner, 'old place', `@**${bob.fullName}** one`)
    await say(owner, 'new place', `@**${bob.fullName}** two`)
    expectSuccess(t, await as(app, owner).patch(`/messages/${first}`, { topic: 'new place', propagate_mode: 'change_one' }))
    const mails = to(await flush(), bob)
    t.same(mails.map((m) => m.subject), [`#${fx.streams.general.name} > new place`])
    t.match(mails[0]?.text, /one[\s\S]*two/)
  })

  t.test('a user with a live queue and active presence is not emailed', async (t) => {
    const bob = await recipient('Bob Here')
    expectSuccess(t, await as(app, bob).post('/register', { event_types: ['message'] }))
    expectSuccess(t, await as(app, bob).post('/users/me/presence', { status: 'active' }))
    await dm(owner, bob, 'you are here')
    t.equal(await pending(bob.id), 0)
    t.same(to(await flush(), bob), [])
  })

  t.test('a user whose queues do not receive messages counts as away', async (t) => {
    const bob = await recipient('Bob Elsewhere')
    expectSuccess(t, await as(app, bob).post('/register', { event_types: ['presence'] }))
    expectSuccess(t, await as(app, bob).post('/users/me/presence', { status: 'active' }))
    await dm(owner, bob, 'not watching messages')
    t.equal(to(await flush(), bob).length, 1)
  })

  t.test('a message read before the email goes out is not emailed', async (t) => {
    const bob = await recipient('Bob Reads')
    const id = await dm(owner, bob, 'read me on the phone')
    expectSuccess(t, await as(app, bob).post('/messages/flags', { messages: [id], op: 'add', flag: 'read' }))
    t.same(to(await flush(), bob), [])
    t.equal(await pending(bob.id), 0)
  })

  t.test('deleting the message withdraws its notification', async (t) => {
    const bob = await recipient('Bob Deleted')
    const id = await dm(owner, bob, 'oops')
    t.equal(await pending(bob.id), 1)
    expectSuccess(t, await as(app, owner).delete(`/messages/${id}`))
    t.equal(await pending(bob.id), 0)
    t.same(to(await flush(), bob), [])
  })

  t.test('enable_offline_email_notifications off: no email for direct messages or mentions', async (t) => {
    const bob = await recipient('Bob Offline Off')
    expectSuccess(t, await as(app, bob).patch('/settings', { enable_offline_email_notifications: false }))
    await dm(owner, bob, 'quiet')
    await say(owner, 'quiet', `@**${bob.fullName}** hi`)
    t.same(to(await flush(), bob), [])
  })

  t.test('a channel message without a mention is not emailed by default', async (t) => {
    const bob = await recipient('Bob Channel')
    await say(owner, 'chatter', 'just talking')
    t.same(to(await flush(), bob), [])
    t.equal(await pending(bob.id), 0)
  })

  t.test('channel email notifications: the user setting and the subscription override', async (t) => {
    const bob = await recipient('Bob Stream Email')
    const carol = await recipient('Carol Stream Email')
    expectSuccess(t, await as(app, bob).patch('/settings', { enable_stream_email_notifications: true }))
    expectSuccess(t, await as(app, carol).post('/users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: fx.streams.general.id, property: 'email_notifications', value: true }],
    }))
    await say(owner, 'news', 'for everyone who wants mail')
    t.equal(await pending(bob.id), 1)
    t.equal(await pending(carol.id), 1)
    await flush()
  })

  t.test('a muted channel or topic stops channel emails and wildcard mentions, not personal mentions', async (t) => {
    const bob = await recipient('Bob Muted Channel')
    expectSuccess(t, await as(app, bob).patch('/settings', { enable_stream_email_notifications: true }))
    expectSuccess(t, await as(app, bob).post('/users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: fx.streams.general.id, property: 'is_muted', value: true }],
    }))
    await say(owner, 'muted-channel', 'channel email?')
    await say(owner, 'muted-channel', '@**all** wildcard?')
    t.equal(await pending(bob.id), 0)
    await say(owner, 'muted-channel', `@**${bob.fullName}** personal`)
    t.equal(await pending(bob.id), 1)
    await flush()
    const carol = await recipient('Carol Muted Topic')
    expectSuccess(t, await as(app, carol).post('/user_topics', { stream_id: fx.streams.general.id, topic: 'boring', visibility_policy: 1 }))
    await say(owner, 'boring', '@**all** wildcard in a muted topic')
    t.equal(await pending(carol.id), 0)
    await say(owner, 'boring', `@**${carol.fullName}** personal in a muted topic`)
    t.equal(await pending(carol.id), 1)
    await flush()
  })

  t.test('in a muted channel, an unmuted topic gets channel emails and a followed topic its followed-topic email', async (t) => {
    const bob = await recipient('Bob Unmuted Topic')
    expectSuccess(t, await as(app, bob).patch('/settings', { enable_stream_email_notifications: true, enable_followed_topic_email_notifications: false }))
    expectSuccess(t, await as(app, bob).post('/users/me/subscriptions/properties', {
      subscription_data: [{ stream_id: fx.streams.general.id, property: 'is_muted', value: true }],
    }))
    expectSuccess(t, await as(app, bob).post('/user_topics', { stream_id: fx.streams.general.id, topic: 'still wanted', visibility_policy: 2 }))
    expectSuccess(t, await as(app, bob).post('/user_topics', { stream_id: fx.streams.general.id, topic: 'followed anyway', visibility_policy: 3 }))
    await say(owner, 'still wanted', 'unmuted topic in a muted channel')
    t.equal(await pending(bob.id), 1)
    await say(owner, 'followed anyway', 'followed topic, followed-topic emails off')
    t.equal(await pending(bob.id), 1, 'following does not lift the channel mute for channel emails')
    expectSuccess(t, await as(app, bob).patch('/settings', { enable_followed_topic_email_notifications: true }))
    await say(owner, 'followed anyway', 'followed topic, followed-topic emails on')
    t.equal(await pending(bob.id), 2)
    t.equal(to(await flush(), bob).length, 2, 'one email per topic')
  })

  t.test('wildcard mentions follow wildcard_mentions_notify', async (t) => {
    const bob = await recipient('Bob Wildcard')
    const carol = await recipient('Carol No Wildcard')
    expectSuccess(t, await as(app, carol).patch('/settings', { wildcard_mentions_notify: false }))
    await say(owner, 'all hands', '@**all** meeting now')
    t.equal(await pending(bob.id), 1)
    t.equal(await pending(carol.id), 0)
    await flush()
  })

  t.test('a followed topic emails every message when enable_followed_topic_email_notifications is on', async (t) => {
    const bob = await recipient('Bob Follows')
    const carol = await recipient('Carol Follows Quietly')
    for (const u of [bob, carol]) expectSuccess(t, await as(app, u).post('/user_topics', { stream_id: fx.streams.general.id, topic: 'followed', visibility_policy: 3 }))
    expectSuccess(t, await as(app, carol).patch('/settings', { enable_followed_topic_email_notifications: false }))
    await say(owner, 'followed', 'news in a followed topic')
    t.equal(await pending(bob.id), 1)
    t.equal(await pending(carol.id), 0)
    await flush()
  })

  t.test('an alert word notifies like a mention', async (t) => {
    const bob = await recipient('Bob Alerted')
    expectSuccess(t, await as(app, bob).post('/users/me/alert_words', { alert_words: ['pineapple'] }))
    await say(owner, 'fruit', 'who ordered the pineapple')
    t.equal(await pending(bob.id), 1)
    await flush()
  })

  t.test('a muted sender is never emailed about', async (t) => {
    const bob = await recipient('Bob Mutes')
    expectSuccess(t, await as(app, bob).post(`/users/me/muted_users/${owner.id}`))
    await dm(owner, bob, 'ignored')
    t.same(to(await flush(), bob), [])
  })

  t.test('the sender and bots are not emailed', async (t) => {
    const bot = await fx.user('bot')
    await dm(owner, bot, 'to a bot')
    t.equal(await pending(bot.id), 0)
    t.equal(await pending(owner.id), 0)
  })

  t.test('an edit that adds a mention emails the newly mentioned user', async (t) => {
    const bob = await recipient('Bob Edited In')
    const id = await say(owner, 'edits', 'no mention yet')
    t.equal(await pending(bob.id), 0)
    expectSuccess(t, await as(app, owner).patch(`/messages/${id}`, { content: `now @**${bob.fullName}**` }))
    t.equal(await pending(bob.id), 1)
    t.equal(to(await flush(), bob).length, 1)
  })

  t.test('the unsubscribe link works without logging in and turns enable_offline_email_notifications off', async (t) => {
    const bob = await recipient('Bob Unsubscribes')
    await dm(owner, bob, 'unsubscribe me')
    const [mail] = to(await flush(), bob)
    const link = /(http\S+\/accounts\/unsubscribe\/missed_messages\/[^\s)]+)/.exec(mail?.text ?? '')?.[1] ?? ''
    const path = new URL(link).pathname
    const forged = await app.inject({ method: 'GET', url: path.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) })
    t.equal(forged.statusCode, 404)
    const res = await app.inject({ method: 'GET', url: path })
    t.equal(res.statusCode, 200)
    t.match(res.body, 'Unsubscribed')
    const settings = await services.prisma.userSettings.findUnique({ where: { userId: bob.id } })
    t.equal(settings?.enableOfflineEmailNotifications, false)
    await dm(owner, bob, 'after unsubscribing')
    t.same(to(await flush(), bob), [])
  })

  t.test('an unreachable or refusing mail server: the notification is kept, counted and retried', async (t) => {
    const bob = await recipient('Bob Retried')
    await dm(owner, bob, 'must arrive eventually')
    const failures = async () => (await services.metrics.missedMessageEmailFailures.get()).values[0]?.value ?? 0
    const failuresBefore = await failures()
    const nowhere = new SmtpMailer('smtp://127.0.0.1:1')
    let counted = 0
    await services.prisma.$executeRaw`UPDATE missed_message_email SET due_at = now() - interval '1 minute' WHERE user_id = ${bob.id}`
    // The node's loop, with its default failure counter (the metric).
    const loop = startMissedMessageEmails(services, { log: app.log, realmIds: [realmId], mailer: nowhere, tickMs: 20, retryBaseMs: 60_000 })
    await eventually('a counted failure', async () => (await failures()) > failuresBefore, { intervalMs: 20 }).catch(() => undefined)
    await loop.stop()
    t.equal(await failures(), failuresBefore + 1, 'roost_missed_message_email_failures_total counts it')
    counted++
    let row = await services.prisma.missedMessageEmail.findFirst({ where: { userId: bob.id } })
    t.equal(row?.attempts, 1)
    t.ok(row && row.dueAt.getTime() > Date.now(), 'due again later')
    t.equal(row?.claimedBy, null)
    t.equal(counted, 1)
    peer.failing = true
    await services.prisma.$executeRaw`UPDATE missed_message_email SET due_at = now() - interval '1 minute' WHERE user_id = ${bob.id}`
    await deliverMissedMessageEmails(services, { log: app.log, realmIds: [realmId], onFailure: () => counted++ }, smtp)
    row = await services.prisma.missedMessageEmail.findFirst({ where: { userId: bob.id } })
    t.equal(row?.attempts, 2)
    t.match(row?.lastError, /451|try again/)
    t.ok(row && row.dueAt.getTime() - Date.now() > 50_000, 'backoff grows')
    peer.failing = false
    await services.prisma.$executeRaw`UPDATE missed_message_email SET due_at = now() - interval '1 minute' WHERE user_id = ${bob.id}`
    const before = peer.received.length
    await deliverMissedMessageEmails(services, { log: app.log, realmIds: [realmId] }, smtp)
    t.equal(peer.received.length, before + 1)
    t.match(peer.received.at(-1)?.text, 'must arrive eventually')
    t.equal(await pending(bob.id), 0)
    t.equal(counted, 2)
  })

  t.test('a restricted guest is not told the name of a sender it may not access', async (t) => {
    const before = (await services.prisma.realm.findUniqueOrThrow({ where: { id: realmId } })).canAccessAllUsersGroupId
    const members = await services.prisma.userGroup.findFirstOrThrow({ where: { realmId, name: 'role:members' } })
    await services.prisma.realm.update({ where: { id: realmId }, data: { canAccessAllUsersGroupId: members.id } })
    t.teardown(() => services.prisma.realm.update({ where: { id: realmId }, data: { canAccessAllUsersGroupId: before } }))
    const guest = await fx.newUser({ fullName: 'Gail Mail Guest', role: 600 })
    const sender = await fx.newUser({ fullName: 'Secret Sender' })
    await services.prisma.subscription.deleteMany({ where: { userId: { in: [guest.id, sender.id] } } })
    expectSuccess(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: fx.streams.general.name }], principals: [guest.id] }))
    await say(sender, 'hidden sender', `@**${guest.fullName}** hello`)
    const [mail] = to(await flush(), guest)
    t.ok(mail)
    t.equal(mail?.from?.value[0]?.name, `Unknown user (${fx.realm.name})`)
    t.match(mail?.text, 'Unknown user:')
    t.notMatch(`${mail?.text} ${String(mail?.html)}`, 'Secret Sender')
  })
})
