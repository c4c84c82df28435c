import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { realmSetter } from '../support/realm-settings.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { applyCookies, cookieHeader } from '../support/browser.js'
import type { Services } from '../../src/services.js'
import type { CapturedBusItem as BusItem } from '../support/events.js'
import { readOutbox } from '../../src/mail/outbox.js'
import { ROLE } from '../../src/domain/roles.js'
import { busItemsDuring } from '../support/events.js'

const capture = busItemsDuring

const keyOf = (url: string): string => url.split('/join/')[1] ?? ''

t.test('invitations', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'roost-invites-'))
  const { app, fx, services, config } = await buildTestApp(t, { config: { dataDir } })
  const { owner, admin, member, guest, otherMember } = fx.users
  const domain = owner.email.split('@')[1]
  let n = 0
  const fresh = () => `invitee${n++}@${domain}`
  const mailsTo = async (email: string) => (await readOutbox(dataDir)).filter((m) => m.includes(`To: ${email}`))
  const linkIn = (mail: string): string => /(http\S+\/join\/[a-z0-9]+)/.exec(mail)?.[1] ?? ''
  const page = (method: 'GET' | 'POST', key: string, form?: Record<string, string>) =>
    app.inject({
      method,
      url: `/join/${key}`,
      headers: { host: fx.host, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
    })

  t.test('POST /invites invites each address, mails the link and tells the administrators', async (t) => {
    const [a, b, c] = [fresh(), fresh(), fresh()]
    const { result, items } = await capture(services, () =>
      as(app, member).post('/invites', { invitee_emails: `${a}, Bea <${b}>\n${c}\n${a.toUpperCase()}`, stream_ids: [fx.streams.design.id] }),
    )
    expectSuccess(t, result)
    const invites = expectSuccess(t, await as(app, member).get('/invites')).invites.filter((i: { email?: string }) => [a, b, c].includes(i.email ?? ''))
    t.equal(invites.length, 3)
    const now = Date.now() / 1000
    t.match(invites[0], { email: a, invited_by_user_id: member.id, invited_as: ROLE.MEMBER, is_multiuse: false, notify_referrer_on_join: true })
    t.ok(Math.abs(invites[0].invited - now) < 10)
    t.ok(Math.abs(invites[0].expiry_date - (now + config.invitationLinkValidityMinutes * 60)) < 10, 'default expiry from the server setting')
    for (const email of [a, b, c]) {
      const mails = await mailsTo(email)
      t.equal(mails.length, 1, `one mail to ${email}`)
      t.match(linkIn(mails[0] ?? ''), new RegExp(`^http://${fx.realm.stringId}\\.localhost:9991/join/[a-z2-7]{24}$`))
    }
    const changed = items.filter((i) => i.event.type === 'invites_changed')
    t.equal(changed.length, 1)
    t.same(changed[0]?.event, { type: 'invites_changed' })
    t.same(changed[0]?.userIds, [owner.id, admin.id, member.id].sort((x, y) => x - y))
  })

  t.test('expiry: minutes, or null for never', async (t) => {
    const [a, b] = [fresh(), fresh()]
    expectSuccess(t, await as(app, admin).post('/invites', { invitee_emails: a, stream_ids: [], invite_expires_in_minutes: 60 }))
    expectSuccess(t, await as(app, admin).post('/invites', { invitee_emails: b, stream_ids: [], invite_expires_in_minutes: null }))
    const invites = expectSuccess(t, await as(app, admin).get('/invites')).invites
    const byEmail = (e: string) => invites.find((i: { email?: string }) => i.email === e)
    t.ok(Math.abs(byEmail(a).expiry_date - (Date.now() / 1000 + 3600)) < 10)
    t.equal(byEmail(b).expiry_date, null)
  })

  t.test('invite_as may not exceed the inviter', async (t) => {
    expectError(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [], invite_as: ROLE.ADMIN }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    expectError(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [], invite_as: ROLE.MODERATOR }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    expectError(t, await as(app, admin).post('/invites', { invitee_emails: fresh(), stream_ids: [], invite_as: ROLE.OWNER }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' })
    expectError(t, await as(app, admin).post('/invites', { invitee_emails: fresh(), stream_ids: [], invite_as: 500 }), { code: 'BAD_REQUEST', msg: 'Invalid invite_as' })
    expectSuccess(t, await as(app, owner).post('/invites', { invitee_emails: fresh(), stream_ids: [], invite_as: ROLE.OWNER }))
    expectSuccess(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [], invite_as: ROLE.GUEST }))
  })

  t.test('guests may not invite; the realm policy applies', async (t) => {
    expectError(t, await as(app, guest).post('/invites', { invitee_emails: fresh(), stream_ids: [] }), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
    expectError(t, await as(app, guest).post('/invites/multiuse', {}), { code: 'BAD_REQUEST', msg: 'Not allowed for guest users' })
    await realmSetter(app, owner, services.prisma, fx.realm.id)({ inviteToRealmPolicy: 2 })
    t.teardown(() => realmSetter(app, owner, services.prisma, fx.realm.id)({ inviteToRealmPolicy: 1 }))
    expectError(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [] }), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectSuccess(t, await as(app, admin).post('/invites', { invitee_emails: fresh(), stream_ids: [] }))
  })

  t.test('stream_ids: required, each visible, and empty without the right to subscribe others', async (t) => {
    expectError(t, await as(app, member).post('/invites', { invitee_emails: fresh() }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'stream_ids' argument" })
    expectError(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [999999] }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID 999999. No invites were sent.' })
    expectError(t, await as(app, otherMember).post('/invites', { invitee_emails: fresh(), stream_ids: [fx.streams.secret.id] }), { code: 'BAD_REQUEST', msg: `Invalid channel ID ${fx.streams.secret.id}. No invites were sent.` })
    await realmSetter(app, owner, services.prisma, fx.realm.id)({ inviteToStreamPolicy: 2 })
    t.teardown(() => realmSetter(app, owner, services.prisma, fx.realm.id)({ inviteToStreamPolicy: 1 }))
    const refused = { code: 'BAD_REQUEST', msg: 'You do not have permission to subscribe other users to channels.' }
    expectError(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [fx.streams.design.id] }), refused)
    expectSuccess(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [] }))
    // Level 342: default channels always; others through the channel's can_add_subscribers_group.
    expectSuccess(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [fx.streams.general.id] }))
    expectError(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [fx.streams.general.id, fx.streams.design.id] }), refused)
    expectSuccess(t, await as(app, admin).patch(`/streams/${fx.streams.design.id}`, { can_add_subscribers_group: JSON.stringify({ direct_members: [member.id], direct_subgroups: [] }) }))
    expectSuccess(t, await as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [fx.streams.general.id, fx.streams.design.id] }))
    expectError(t, await as(app, otherMember).post('/invites', { invitee_emails: fresh(), stream_ids: [fx.streams.design.id] }), refused)
  })

  t.test('an empty address list is refused', async (t) => {
    for (const invitee_emails of ['', ' , \n ']) {
      expectError(t, await as(app, member).post('/invites', { invitee_emails, stream_ids: [] }), { code: 'BAD_REQUEST', msg: 'You must specify at least one email address.' })
    }
  })

  t.test('INVITATION_FAILED: invalid addresses stop everything', async (t) => {
    const ok = fresh()
    const body = expectError(t, await as(app, member).post('/invites', { invitee_emails: `${ok}, not-an-address, ${otherMember.deliveryEmail}`, stream_ids: [] }), {
      code: 'INVITATION_FAILED', status: 400, msg: "Some emails did not validate, so we didn't send any invitations.",
    })
    t.same(body.errors, [['not-an-address', 'Invalid address.', false], [otherMember.deliveryEmail, 'Already has an account.', false]])
    t.equal(body.sent_invitations, false)
    t.equal(body.daily_limit_reached, false)
    t.equal(body.license_limit_reached, false)
    t.equal((await mailsTo(ok)).length, 0)
  })

  t.test('INVITATION_FAILED: existing accounts are skipped, the rest invited', async (t) => {
    const gone = await fx.newUser()
    await services.prisma.user.update({ where: { id: gone.id }, data: { isActive: false } })
    const all = expectError(t, await as(app, member).post('/invites', { invitee_emails: `${otherMember.deliveryEmail}, ${gone.deliveryEmail}`, stream_ids: [] }), {
      code: 'INVITATION_FAILED', msg: "We weren't able to invite anyone.",
    })
    t.same(all.errors, [[otherMember.deliveryEmail, 'Already has an account.', false], [gone.deliveryEmail, 'Account has been deactivated.', true]])
    t.equal(all.sent_invitations, false)
    const ok = fresh()
    const some = expectError(t, await as(app, member).post('/invites', { invitee_emails: `${ok}, ${otherMember.deliveryEmail}`, stream_ids: [] }), {
      code: 'INVITATION_FAILED', msg: "Some of those addresses are already using Roost, so we didn't send them an invitation. We did send invitations to everyone else!",
    })
    t.equal(some.sent_invitations, true)
    t.equal((await mailsTo(ok)).length, 1)
  })

  t.test('INVITATION_FAILED: the realm daily limit', async (t) => {
    const sent = await services.prisma.invitation.count({ where: { realmId: fx.realm.id } })
    await services.prisma.realm.update({ where: { id: fx.realm.id }, data: { maxInvitesPerDay: sent + 1 } })
    t.teardown(() => services.prisma.realm.update({ where: { id: fx.realm.id }, data: { maxInvitesPerDay: null } }))
    const body = expectError(t, await as(app, admin).post('/invites', { invitee_emails: `${fresh()}, ${fresh()}`, stream_ids: [] }), { code: 'INVITATION_FAILED', msg: /limits the number of invitations/ })
    t.same(body.errors, [])
    t.equal(body.daily_limit_reached, true)
    t.equal(body.sent_invitations, false)
  })

  t.test('POST /invites/multiuse returns a link that GET /invites lists', async (t) => {
    const body = expectSuccess(t, await as(app, admin).post('/invites/multiuse', { invite_expires_in_minutes: null, stream_ids: [fx.streams.design.id] }))
    t.match(body.invite_link, new RegExp(`^http://${fx.realm.stringId}\\.localhost:9991/join/[a-z2-7]{24}$`))
    const listed = expectSuccess(t, await as(app, admin).get('/invites')).invites.find((i: { link_url?: string }) => i.link_url === body.invite_link)
    t.match(listed, { invited_by_user_id: admin.id, expiry_date: null, invited_as: ROLE.MEMBER, is_multiuse: true })
    expectError(t, await as(app, member).post('/invites/multiuse', {}), { code: 'BAD_REQUEST', msg: 'Insufficient permission' })
    expectError(t, await as(app, admin).post('/invites/multiuse', { stream_ids: [999999] }), { code: 'BAD_REQUEST', msg: 'Invalid channel ID 999999. No invites were sent.' })
    expectError(t, await as(app, admin).post('/invites/multiuse', { invite_as: ROLE.OWNER }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' })
  })

  t.test('members see their own invitations, administrators all', async (t) => {
    const mine = fresh()
    expectSuccess(t, await as(app, otherMember).post('/invites', { invitee_emails: mine, stream_ids: [] }))
    const theirs = expectSuccess(t, await as(app, otherMember).get('/invites')).invites
    t.ok(theirs.every((i: { invited_by_user_id: number }) => i.invited_by_user_id === otherMember.id))
    t.ok(expectSuccess(t, await as(app, admin).get('/invites')).invites.some((i: { email?: string }) => i.email === mine))
  })

  t.test('DELETE revokes; resend mails again; both tell the administrators', async (t) => {
    const email = fresh()
    expectSuccess(t, await as(app, member).post('/invites', { invitee_emails: email, stream_ids: [] }))
    const invite = expectSuccess(t, await as(app, member).get('/invites')).invites.find((i: { email?: string }) => i.email === email)
    expectError(t, await as(app, otherMember).post(`/invites/${invite.id}/resend`), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    const resent = await capture(services, () => as(app, member).post(`/invites/${invite.id}/resend`))
    expectSuccess(t, resent.result)
    t.equal((await mailsTo(email)).length, 2)
    t.equal(resent.items.filter((i) => i.event.type === 'invites_changed').length, 1)
    expectError(t, await as(app, otherMember).delete(`/invites/${invite.id}`), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
    const revoked = await capture(services, () => as(app, admin).delete(`/invites/${invite.id}`))
    expectSuccess(t, revoked.result)
    t.equal(revoked.items.filter((i) => i.event.type === 'invites_changed').length, 1)
    t.notOk(expectSuccess(t, await as(app, member).get('/invites')).invites.some((i: { email?: string }) => i.email === email))
    expectError(t, await as(app, admin).delete(`/invites/${invite.id}`), { code: 'BAD_REQUEST', msg: 'No such invitation' })
    expectError(t, await as(app, admin).post('/invites/999999/resend'), { code: 'BAD_REQUEST', msg: 'No such invitation' })

    const link = expectSuccess(t, await as(app, admin).post('/invites/multiuse', {})).invite_link
    const multi = expectSuccess(t, await as(app, admin).get('/invites')).invites.find((i: { link_url?: string }) => i.link_url === link)
    expectSuccess(t, await as(app, admin).delete(`/invites/multiuse/${multi.id}`))
    expectError(t, await as(app, admin).delete(`/invites/multiuse/${multi.id}`), { code: 'BAD_REQUEST', msg: 'Invitation has already been revoked' })
    expectError(t, await as(app, admin).delete('/invites/multiuse/999999'), { code: 'BAD_REQUEST', msg: 'No such invitation' })
    const revokedPage = await page('GET', keyOf(link))
    t.equal(revokedPage.statusCode, 410)
    t.match(revokedPage.body, /has been revoked/)
  })

  t.test('the link creates the account with the invited role and channels and notifies the referrer', async (t) => {
    const email = fresh()
    await services.prisma.defaultStream.deleteMany({ where: { realmId: fx.realm.id } })
    await services.prisma.defaultStream.create({ data: { realmId: fx.realm.id, streamId: fx.streams.general.id } })
    expectSuccess(t, await as(app, admin).post('/invites', { invitee_emails: email, stream_ids: [fx.streams.design.id], invite_as: ROLE.MODERATOR, include_realm_default_subscriptions: true }))
    const key = keyOf(linkIn((await mailsTo(email))[0] ?? ''))
    const form = await page('GET', key)
    t.equal(form.statusCode, 200)
    t.match(form.headers['content-type'], /text\/html/)
    t.match(form.body, /<form method="post" action="\/join\//)
    t.match(form.body, email)

    const short = await page('POST', key, { full_name: 'Nia New', password: 'abc' })
    t.equal(short.statusCode, 400)
    t.match(short.body, /at least 6 characters/)
    t.equal(await services.prisma.user.count({ where: { realmId: fx.realm.id, deliveryEmail: email } }), 0, 'nothing created')

    const { result: done, items } = await capture(services, () => page('POST', key, { full_name: 'Nia New', password: 'a-good-password' }))
    t.equal(done.statusCode, 303, 'the new account goes into the app')
    t.equal(done.headers.location, '/')
    const cookies = applyCookies({}, done)
    t.ok(cookies.sessionid, 'logged in')
    t.equal(bodyOf(await app.inject({ method: 'GET', url: '/json/users/me', headers: { host: fx.host, cookie: cookieHeader(cookies) } })).full_name, 'Nia New')
    const user = await services.prisma.user.findFirstOrThrow({ where: { realmId: fx.realm.id, deliveryEmail: email } })
    t.equal(user.role, ROLE.MODERATOR)
    t.equal(user.fullName, 'Nia New')
    const subs = await services.prisma.subscription.findMany({ where: { userId: user.id, active: true } })
    t.same(subs.map((s) => s.streamId).sort(), [fx.streams.general.id, fx.streams.design.id].sort())
    const login = await app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', headers: { host: fx.host, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ username: email, password: 'a-good-password' }).toString() })
    t.equal(login.statusCode, 200, 'the new account can log in')

    t.ok(items.some((i) => i.event.type === 'realm_user' && i.event.op === 'add'))
    t.ok(items.some((i) => i.event.type === 'subscription' && i.event.op === 'add' && i.userIds.includes(user.id)))
    t.ok(items.some((i) => i.event.type === 'invites_changed'))
    const dm = items.find((i) => i.event.type === 'message')?.event.message as { sender_id: number; raw_content: string; display_recipient: { id: number }[] }
    t.equal(dm?.sender_id, fx.notificationBot.id)
    t.equal(dm?.raw_content, `@_**Nia New|${user.id}** accepted your invitation to join Roost!`)
    t.ok(dm?.display_recipient.some((r) => r.id === admin.id))

    const again = await page('GET', key)
    t.equal(again.statusCode, 410)
    t.match(again.body, /already been used/)
    const reused = await page('POST', key, { full_name: 'Second Try', password: 'another-password' })
    t.equal(reused.statusCode, 410)
  })

  t.test('notify_referrer_on_join false sends no message', async (t) => {
    const email = fresh()
    expectSuccess(t, await as(app, member).post('/invites', { invitee_emails: email, stream_ids: [], notify_referrer_on_join: false }))
    const key = keyOf(linkIn((await mailsTo(email))[0] ?? ''))
    const { result, items } = await capture(services, () => page('POST', key, { full_name: 'Quiet Person', password: 'a-good-password' }))
    t.equal(result.statusCode, 303)
    t.notOk(items.some((i) => i.event.type === 'message'))
  })

  t.test('expired and unknown links get a clear page', async (t) => {
    const email = fresh()
    expectSuccess(t, await as(app, member).post('/invites', { invitee_emails: email, stream_ids: [], invite_expires_in_minutes: 1 }))
    const key = keyOf(linkIn((await mailsTo(email))[0] ?? ''))
    await services.prisma.invitation.updateMany({ where: { key }, data: { expiresAt: new Date(Date.now() - 1000) } })
    const expired = await page('GET', key)
    t.equal(expired.statusCode, 410)
    t.match(expired.body, /has expired/)
    const posted = await page('POST', key, { full_name: 'Late Comer', password: 'a-good-password' })
    t.equal(posted.statusCode, 410)
    t.equal(await services.prisma.user.count({ where: { realmId: fx.realm.id, deliveryEmail: email } }), 0)
    const unknown = await page('GET', 'abcdefghijklmnopqrstuvwx')
    t.equal(unknown.statusCode, 404)
    t.match(unknown.body, /not valid/)
  })

  t.test('a reusable link asks for the address and serves several people', async (t) => {
    const link = expectSuccess(t, await as(app, admin).post('/invites/multiuse', { invite_as: ROLE.GUEST, stream_ids: [fx.streams.design.id] })).invite_link
    const key = keyOf(link)
    t.match((await page('GET', key)).body, /name="email"/)
    for (const name of ['First Guest', 'Second Guest']) {
      const email = fresh()
      const res = await page('POST', key, { email, full_name: name, password: 'a-good-password' })
      t.equal(res.statusCode, 303)
      const user = await services.prisma.user.findFirstOrThrow({ where: { realmId: fx.realm.id, deliveryEmail: email } })
      t.equal(user.role, ROLE.GUEST)
    }
    const taken = await page('POST', key, { email: otherMember.deliveryEmail, full_name: 'Copy Cat', password: 'a-good-password' })
    t.equal(taken.statusCode, 400)
    t.match(taken.body, /already exists/)
  })
  t.test('group_ids (level 322): the new user joins the invitation\'s groups that are still active', async (t) => {
    const group = expectSuccess(t, await as(app, member).post('/user_groups/create', { name: 'invitees', description: '', members: [member.id] })).group_id as number
    const gone = expectSuccess(t, await as(app, member).post('/user_groups/create', { name: 'invitees-old', description: '', members: [member.id] })).group_id as number
    const foreign = expectSuccess(t, await as(app, otherMember).post('/user_groups/create', { name: 'not-mine', description: '', members: [otherMember.id] })).group_id as number
    const everyone = (await services.prisma.userGroup.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'role:everyone' } })).id
    const invite = (group_ids: unknown) => as(app, member).post('/invites', { invitee_emails: fresh(), stream_ids: [], group_ids })
    expectError(t, await invite([999_999]), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid user group' })
    expectError(t, await invite([everyone]), { code: 'BAD_REQUEST', status: 400, msg: 'Insufficient permission' })
    expectError(t, await invite([foreign]), { code: 'BAD_REQUEST', status: 400, msg: 'Insufficient permission' })
    expectError(t, await invite('nope'), { code: 'BAD_REQUEST', status: 400 })
    const email = fresh()
    expectSuccess(t, await as(app, member).post('/invites', { invitee_emails: email, stream_ids: [], group_ids: [group, gone] }))
    expectSuccess(t, await as(app, member).post(`/user_groups/${gone}/deactivate`))
    expectError(t, await invite([gone]), { code: 'BAD_REQUEST', status: 400, msg: 'User group is deactivated.' })
    const key = keyOf(linkIn((await mailsTo(email))[0] ?? ''))
    const { result, items } = await capture(services, () => page('POST', key, { full_name: 'Grace Group', password: 'a-good-password' }))
    t.equal(result.statusCode, 303)
    const user = await services.prisma.user.findFirstOrThrow({ where: { realmId: fx.realm.id, deliveryEmail: email } })
    t.same(expectSuccess(t, await as(app, member).get(`/user_groups/${group}/members`)).members, [member.id, user.id].sort((a, b) => a - b))
    t.notOk(await services.prisma.userGroupMember.findFirst({ where: { groupId: gone, userId: user.id } }), 'not in the deactivated group')
    const added = items.filter((i) => i.event.type === 'user_group' && i.event.group_id === group)
    t.same(added.map((i) => i.event), [{ type: 'user_group', op: 'add_members', group_id: group, user_ids: [user.id] }])
    t.ok(added[0]?.userIds.includes(member.id))

    // Naming a group needs can_add_members_group (the creator's) or can_manage_all_groups (owners), not the administrator role.
    expectError(t, await as(app, admin).post('/invites/multiuse', { group_ids: [group] }), { code: 'BAD_REQUEST', status: 400, msg: 'Insufficient permission' })
    const link = expectSuccess(t, await as(app, owner).post('/invites/multiuse', { group_ids: [group] })).invite_link as string
    t.same((await services.prisma.multiuseInvite.findFirstOrThrow({ where: { key: keyOf(link) } })).groupIds, [group])
  })
})
