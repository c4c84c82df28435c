// Every array parameter is resolved with set-based statements (docs/api.md
// "Request limits"): for each route that takes an array, the same request is sent
// with SMALL and with LARGE elements (valid ones, made beforehand with
// set-based fixtures) and the database statements each runs are counted
// (support/statements.ts). The counts must be equal: one query per element
// would make the large request run LARGE − SMALL more. A case may allow a
// small constant difference (`slack`) only with the reason written beside it.
//
// The routes are listed as data below, one row per array parameter; the last
// test checks that every array parameter the route table declares has a row.
// Lists that arrive in a string or an untyped JSON parameter (the `to` of
// POST /messages, `invitee_emails`, the `narrow` of GET /messages and
// matches_narrow) have rows too, which that check cannot ask for.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { countStatements, countingDatabase } from '../support/statements.js'
import type { User } from '../../src/db/index.js'
import type { RowChange } from '../../src/db/row-writes.js'
import { pickStreamColor } from '../../src/actions/user-rows.js'
import { SYSTEM_GROUPS } from '../../src/domain/system-groups.js'
import { renderPlainDescription } from '../../src/actions/render-description.js'
import { ROLE } from '../../src/domain/roles.js'
import { FIELD_TYPE } from '../../src/queries/custom-profile-fields.js'
import { allRoutes } from '../../src/http/routes/index.js'
import { withTimeout } from '../events/queue-store.contract.js'

const SMALL = 2
const LARGE = 40

type Send = () => Promise<LightMyRequestResponse>

interface Case {
  /** `METHOD /path` as the route table declares it. */
  route: string
  /** The array parameter (or the element field holding an array, `drafts[].to`). */
  param: string
  /** Makes the state a request with `n` elements needs (not counted); returns the request. */
  prepare(n: number): Promise<Send>
  /** Statements the large request may run beyond the small one, and why. */
  slack?: { count: number; why: string }
  /** Undoes what prepare changed, after each request (not counted). */
  after?: () => Promise<void>
}


t.test('array parameters are resolved with set-based statements', async (t) => {
  const database = await countingDatabase()
  const { app, fx, services } = await buildTestApp(t, { database })
  const { prisma } = services
  const { owner, admin, member } = fx.users
  const realmId = fx.realm.id
  const general = fx.streams.general
  let unique = 0
  const next = () => unique++

  // ---------------------------------------------------------------- set-based fixtures

  const groupId = async (name: string) => (await prisma.userGroup.findUniqueOrThrow({ where: { realmId_name: { realmId, name } } })).id
  const membersGroup = await groupId(SYSTEM_GROUPS.members)
  const adminsGroup = general.canRemoveSubscribersGroupId

  /** `n` active members, each in the members group and subscribed to general. */
  async function makeUsers(n: number): Promise<User[]> {
    const batch = next()
    const users = await prisma.user.createManyAndReturn({
      data: Array.from({ length: n }, (_, i) => {
        const email = `bulk${batch}-${i}@${fx.realm.stringId}.example.com`
        return { realmId, email, deliveryEmail: email, fullName: `Bulk ${batch} ${i}`, apiKey: randomBytes(16).toString('hex'), role: ROLE.MEMBER, dateJoined: new Date() }
      }),
    })
    await prisma.userSettings.createMany({ data: users.map((u) => ({ userId: u.id })) })
    await prisma.userGroupMember.createMany({ data: users.map((u) => ({ groupId: membersGroup, userId: u.id })) })
    await prisma.subscription.createMany({ data: users.map((u) => ({ userId: u.id, streamId: general.id, color: pickStreamColor(0) })) })
    return users
  }

  /** `n` public channels, with `subscribers` subscribed to each. */
  async function makeStreams(n: number, subscribers: User[] = []): Promise<{ id: number; name: string }[]> {
    const batch = next()
    const streams = await prisma.stream.createManyAndReturn({
      data: Array.from({ length: n }, (_, i) => ({
        realmId,
        name: `bulk ${batch}-${i}`,
        renderedDescription: renderPlainDescription(''),
        canRemoveSubscribersGroupId: adminsGroup,
        creatorId: owner.id,
        dateCreated: new Date(),
      })),
      select: { id: true, name: true },
    })
    await prisma.subscription.createMany({ data: streams.flatMap((s, i) => subscribers.map((u) => ({ userId: u.id, streamId: s.id, color: pickStreamColor(i) }))) })
    return streams
  }

  /** `n` user groups (not system groups) with no members. */
  async function makeGroups(n: number): Promise<number[]> {
    const batch = next()
    const nobody = await groupId(SYSTEM_GROUPS.nobody)
    // Managed by the administrators, who make the requests below.
    const admins = await groupId(SYSTEM_GROUPS.administrators)
    const groups = await prisma.userGroup.createManyAndReturn({
      data: Array.from({ length: n }, (_, i) => ({ realmId, name: `bulk group ${batch}-${i}`, creatorId: owner.id, canMentionGroupId: nobody, canManageGroupId: admins })),
      select: { id: true },
    })
    return groups.map((g) => g.id)
  }

  /** `n` messages to general from the owner, each with a row for `user`. */
  async function makeMessages(n: number, user: User): Promise<number[]> {
    const messages = await prisma.message.createManyAndReturn({
      data: Array.from({ length: n }, (_, i) => ({ realmId, senderId: owner.id, streamId: general.id, topic: 'bulk', content: `m${i}`, renderedContent: `<p>m${i}</p>`, dateSent: new Date() })),
      select: { id: true },
    })
    await prisma.userMessage.createMany({ data: messages.map((m) => ({ userId: user.id, messageId: m.id })) })
    return messages.map((m) => m.id)
  }

  /** The realm has exactly `n` short-text custom profile fields (made as needed); their IDs. */
  async function profileFields(n: number): Promise<number[]> {
    const have = await prisma.customProfileField.findMany({ where: { realmId }, orderBy: { order: 'asc' }, select: { id: true } })
    if (have.length < n) {
      const batch = next()
      await prisma.customProfileField.createMany({
        data: Array.from({ length: n - have.length }, (_, i) => ({ realmId, name: `Field ${batch}-${i}`, type: 1, order: have.length + i })),
      })
    }
    return (await prisma.customProfileField.findMany({ where: { realmId }, orderBy: { order: 'asc' }, select: { id: true } })).map((f) => f.id).slice(0, n)
  }

  const pool = await makeUsers(LARGE + 10)
  const ids = (n: number, from = 0) => pool.slice(from, from + n).map((u) => u.id)
  /** A request the authentication cache answers, so that the counted one finds `user` cached like any other. */
  const warm = async (user: User) => {
    expectSuccess(t, await as(app, user).get('/users/me'))
  }
  /**
   * Runs `write`, then waits until this node's listener has passed `cache[method]`
   * a change that `matches`: the writes' evictions have then all landed, none
   * inside a counted request.
   */
  async function afterDelivery<A>(
    cache: { whenListening(): Promise<void> },
    method: string,
    matches: (change: A) => boolean,
    write: () => Promise<unknown>,
    what: string,
  ): Promise<void> {
    await withTimeout(cache.whenListening(), 10_000, 'the invalidation listener')
    const hooks = cache as unknown as Record<string, (change: A) => void>
    const original = hooks[method] as (change: A) => void
    let delivered = () => {}
    const notified = new Promise<void>((resolve) => (delivered = resolve))
    hooks[method] = (change) => {
      original.call(cache, change)
      if (matches(change)) delivered()
    }
    try {
      await write()
      await withTimeout(notified, 10_000, what)
    } finally {
      hooks[method] = original
    }
  }
  /**
   * Changes the realm row and waits for its NOTIFY: an eviction landing inside
   * the counted request would make it read the realm once more (seen on CI as
   * 19 → 20 statements).
   */
  const updateRealm = (data: { notificationBotId: number | null }) =>
    afterDelivery<RowChange>(
      services.authCache,
      'changed',
      (change) => change.table === 'realm' && (change.id === realmId || change.id === 'all'),
      () => prisma.realm.update({ where: { id: realmId }, data }),
      "the realm row's notification",
    )
  /**
   * Waits until every user-data notification committed so far is delivered:
   * one connection delivers a channel's notifications in commit order, so a
   * sentinel sent now arrives after them. Rows written by a case's
   * preparation (user_message rows, say) evict their users when their NOTIFY
   * arrives; landing between the warming request and the counted one, that
   * made only one of the two read the user's data again (seen on CI: one more
   * statement with 40 elements than with 2). User ID 0 names nobody: the
   * sentinel evicts nothing.
   */
  const settleUserData = () =>
    afterDelivery<number[] | 'all'>(
      services.userDataCache,
      'userDataChanged',
      (userIds) => userIds !== 'all' && userIds.includes(0),
      () => prisma.$executeRaw`SELECT pg_notify('roost_user_data', '0')`,
      'the user data sentinel',
    )
  const sending = (user: User, send: Send): Send => async () => {
    await settleUserData()
    await warm(user)
    return send()
  }
  const at = () => Math.floor(Date.now() / 1000) + 3600

  const cases: Case[] = [
    {
      route: 'POST /users/me/alert_words',
      param: 'alert_words',
      prepare: async (n) => {
        const batch = next()
        return sending(member, () => as(app, member).post('/users/me/alert_words', { alert_words: Array.from({ length: n }, (_, i) => `word${batch}x${i}`) }))
      },
    },
    {
      route: 'DELETE /users/me/alert_words',
      param: 'alert_words',
      prepare: async (n) => {
        const words = Array.from({ length: n }, (_, i) => `gone${next()}x${i}`)
        expectSuccess(t, await as(app, member).post('/users/me/alert_words', { alert_words: words }))
        return sending(member, () => as(app, member).delete('/users/me/alert_words', { alert_words: words }))
      },
    },
    {
      route: 'PATCH /realm/profile_fields',
      param: 'order',
      prepare: async (n) => {
        const fields = await profileFields(n)
        return sending(admin, () => as(app, admin).patch('/realm/profile_fields', { order: [...fields].reverse() }))
      },
    },
    {
      route: 'PATCH /users/me/profile_data',
      param: 'data',
      prepare: async (n) => {
        const fields = await profileFields(n)
        const batch = next()
        return sending(member, () => as(app, member).patch('/users/me/profile_data', { data: fields.map((id) => ({ id, value: `v${batch}` })) }))
      },
    },
    {
      route: 'PATCH /users/me/profile_data',
      param: 'data[].value (users of a user field)',
      prepare: async (n) => {
        const field = await prisma.customProfileField.create({ data: { realmId, name: `People ${next()}`, type: FIELD_TYPE.USER, order: 1000 + next() } })
        return sending(member, () => as(app, member).patch('/users/me/profile_data', { data: [{ id: field.id, value: ids(n) }] }))
      },
      after: async () => {
        await prisma.customProfileField.deleteMany({ where: { realmId, type: FIELD_TYPE.USER } })
      },
    },
    {
      route: 'DELETE /users/me/profile_data',
      param: 'data',
      prepare: async (n) => {
        const fields = await profileFields(n)
        expectSuccess(t, await as(app, member).patch('/users/me/profile_data', { data: fields.map((id) => ({ id, value: 'to remove' })) }))
        return sending(member, () => as(app, member).delete('/users/me/profile_data', { data: fields }))
      },
    },
    {
      route: 'PATCH /users/:user_id',
      param: 'profile_data',
      prepare: async (n) => {
        const fields = await profileFields(n)
        const batch = next()
        return sending(admin, () => as(app, admin).patch(`/users/${member.id}`, { profile_data: fields.map((id) => ({ id, value: `a${batch}` })) }))
      },
    },
    {
      route: 'POST /drafts',
      param: 'drafts',
      prepare: async (n) =>
        sending(member, () => as(app, member).post('/drafts', { drafts: ids(n).map((id) => ({ type: 'private', to: [id], topic: '', content: 'hello' })) })),
    },
    {
      route: 'POST /drafts',
      param: 'drafts (channel drafts)',
      prepare: async (n) => {
        const streams = await makeStreams(n)
        return sending(member, () => as(app, member).post('/drafts', { drafts: streams.map((s) => ({ type: 'stream', to: [s.id], topic: 'plans', content: 'hello' })) }))
      },
    },
    {
      route: 'POST /drafts',
      param: 'drafts[].to',
      prepare: async (n) => sending(member, () => as(app, member).post('/drafts', { drafts: [{ type: 'private', to: ids(n), topic: '', content: 'hello' }] })),
    },
    {
      route: 'PATCH /drafts/:draft_id',
      param: 'draft.to',
      prepare: async (n) => {
        const [id] = expectSuccess(t, await as(app, member).post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'x' }] })).ids as number[]
        return sending(member, () => as(app, member).patch(`/drafts/${id}`, { draft: { type: 'private', to: ids(n), topic: '', content: 'hello' } }))
      },
    },
    {
      route: 'POST /invites',
      param: 'stream_ids',
      prepare: async (n) => {
        const streams = await makeStreams(n)
        return sending(admin, () => as(app, admin).post('/invites', { invitee_emails: `new${next()}@example.org`, stream_ids: streams.map((s) => s.id) }))
      },
    },
    {
      route: 'POST /invites',
      param: 'invitee_emails',
      prepare: async (n) => {
        const batch = next()
        const emails = Array.from({ length: n }, (_, i) => `invitee${batch}x${i}@example.org`)
        return sending(admin, () => as(app, admin).post('/invites', { invitee_emails: emails.join(', '), stream_ids: [] }))
      },
    },
    {
      route: 'POST /invites/multiuse',
      param: 'stream_ids',
      prepare: async (n) => {
        const streams = await makeStreams(n)
        return sending(admin, () => as(app, admin).post('/invites/multiuse', { stream_ids: streams.map((s) => s.id) }))
      },
    },
    {
      route: 'POST /invites',
      param: 'group_ids',
      prepare: async (n) => {
        const groups = await makeGroups(n)
        return sending(admin, () => as(app, admin).post('/invites', { invitee_emails: `grouped${next()}@example.org`, stream_ids: [], group_ids: groups }))
      },
    },
    {
      route: 'POST /invites/multiuse',
      param: 'group_ids',
      prepare: async (n) => {
        const groups = await makeGroups(n)
        return sending(admin, () => as(app, admin).post('/invites/multiuse', { stream_ids: [], group_ids: groups }))
      },
    },
    {
      route: 'PATCH /realm/linkifiers',
      param: 'ordered_linkifier_ids',
      prepare: async (n) => {
        const batch = next()
        await prisma.realmLinkifier.deleteMany({ where: { realmId } })
        await prisma.realmLinkifier.createMany({
          data: Array.from({ length: n }, (_, i) => ({ realmId, pattern: `L${batch}x${i}-(?P<id>[0-9]+)`, urlTemplate: 'https://example.org/{id}', order: i })),
        })
        const linkifiers = await prisma.realmLinkifier.findMany({ where: { realmId }, orderBy: { order: 'asc' }, select: { id: true } })
        return sending(admin, () => as(app, admin).patch('/realm/linkifiers', { ordered_linkifier_ids: linkifiers.map((l) => l.id).reverse() }))
      },
    },
    {
      route: 'POST /messages/flags',
      param: 'messages',
      prepare: async (n) => {
        const messages = await makeMessages(n, member)
        return sending(member, () => as(app, member).post('/messages/flags', { messages, op: 'add', flag: 'starred' }))
      },
    },
    {
      route: 'POST /messages/flags/narrow',
      param: 'narrow',
      prepare: async (n) =>
        sending(member, () =>
          as(app, member).post('/messages/flags/narrow', {
            anchor: 'newest',
            num_before: 10,
            num_after: 0,
            narrow: ids(n).map((id) => ({ operator: 'sender', operand: id, negated: true })),
            op: 'add',
            flag: 'read',
          }),
        ),
    },
    {
      route: 'GET /messages/matches_narrow',
      param: 'msg_ids',
      prepare: async (n) => {
        const messages = await makeMessages(n, member)
        return sending(member, () => as(app, member).get('/messages/matches_narrow', { msg_ids: messages, narrow: [{ operator: 'topic', operand: 'bulk' }] }))
      },
    },
    {
      route: 'GET /messages/matches_narrow',
      param: 'narrow',
      prepare: async (n) => {
        const messages = await makeMessages(2, member)
        return sending(member, () =>
          as(app, member).get('/messages/matches_narrow', { msg_ids: messages, narrow: ids(n).map((id) => ({ operator: 'sender', operand: id, negated: true })) }),
        )
      },
    },
    {
      route: 'GET /messages',
      param: 'narrow',
      prepare: async (n) =>
        sending(member, () =>
          as(app, member).get('/messages', { anchor: 'newest', num_before: 5, narrow: ids(n).map((id) => ({ operator: 'sender', operand: id, negated: true })) }),
        ),
    },
    {
      route: 'GET /messages',
      param: 'narrow (dm operand)',
      prepare: async (n) =>
        sending(member, () => as(app, member).get('/messages', { anchor: 'newest', num_before: 5, narrow: [{ operator: 'dm', operand: ids(n) }] })),
    },
    {
      route: 'GET /messages',
      param: 'message_ids',
      prepare: async (n) => {
        const messages = await makeMessages(n, member)
        return sending(member, () => as(app, member).get('/messages', { message_ids: messages }))
      },
    },
    {
      route: 'POST /messages',
      param: 'to',
      prepare: async (n) => sending(member, () => as(app, member).post('/messages', { type: 'direct', to: JSON.stringify(ids(n)), content: `hello ${next()}` })),
    },
    {
      route: 'POST /scheduled_messages',
      param: 'to',
      prepare: async (n) =>
        sending(member, () => as(app, member).post('/scheduled_messages', { type: 'direct', to: ids(n), content: 'later', scheduled_delivery_timestamp: at() })),
    },
    {
      route: 'PATCH /scheduled_messages/:scheduled_message_id',
      param: 'to',
      prepare: async (n) => {
        const id = expectSuccess(t, await as(app, member).post('/scheduled_messages', { type: 'direct', to: [owner.id], content: 'later', scheduled_delivery_timestamp: at() }))
          .scheduled_message_id as number
        return sending(member, () => as(app, member).patch(`/scheduled_messages/${id}`, { type: 'direct', to: ids(n) }))
      },
    },
    {
      route: 'POST /typing',
      param: 'to',
      prepare: async (n) => sending(member, () => as(app, member).post('/typing', { op: 'start', to: ids(n) })),
    },
    {
      route: 'POST /users/me/subscriptions',
      param: 'subscriptions (existing channels)',
      prepare: async (n) => {
        const streams = await makeStreams(n)
        return sending(member, () => as(app, member).post('/users/me/subscriptions', { subscriptions: streams.map((s) => ({ name: s.name })) }))
      },
    },
    {
      route: 'POST /users/me/subscriptions',
      param: 'subscriptions (new channels)',
      // Without a notification bot: the subscriptions alone (the next case adds the notices).
      prepare: async (n) => {
        await updateRealm({ notificationBotId: null })
        const batch = next()
        return sending(admin, () => as(app, admin).post('/users/me/subscriptions', { subscriptions: Array.from({ length: n }, (_, i) => ({ name: `fresh ${batch}-${i}` })) }))
      },
      after: async () => {
        await updateRealm({ notificationBotId: fx.notificationBot.id })
      },
    },
    {
      route: 'POST /users/me/subscriptions',
      param: 'subscriptions (new channels, each with its creation notice)',
      prepare: async (n) => {
        const batch = next()
        return sending(admin, () => as(app, admin).post('/users/me/subscriptions', { subscriptions: Array.from({ length: n }, (_, i) => ({ name: `fresh ${batch}-${i}` })) }))
      },
    },
    {
      route: 'POST /users/me/subscriptions',
      param: 'principals',
      // Subscribed to a channel the request creates: nobody gets a "subscribed you" message (the next case does).
      prepare: async (n) =>
        sending(admin, () => as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: `fresh ${next()}` }], principals: ids(n) })),
    },
    {
      route: 'POST /users/me/subscriptions',
      param: 'principals (each told by a direct message)',
      prepare: async (n) => {
        const [stream] = await makeStreams(1, [admin])
        return sending(admin, () => as(app, admin).post('/users/me/subscriptions', { subscriptions: [{ name: stream?.name }], principals: ids(n) }))
      },
    },
    {
      route: 'DELETE /users/me/subscriptions',
      param: 'subscriptions',
      prepare: async (n) => {
        const streams = await makeStreams(n, [member])
        return sending(member, () => as(app, member).delete('/users/me/subscriptions', { subscriptions: streams.map((s) => s.name) }))
      },
    },
    {
      route: 'DELETE /users/me/subscriptions',
      param: 'principals',
      prepare: async (n) => {
        const [stream] = await makeStreams(1, pool.slice(0, n))
        return sending(admin, () => as(app, admin).delete('/users/me/subscriptions', { subscriptions: [stream?.name], principals: ids(n) }))
      },
    },
    {
      route: 'POST /users/me/subscriptions/properties',
      param: 'subscription_data',
      prepare: async (n) => {
        const streams = await makeStreams(n, [member])
        return sending(member, () =>
          as(app, member).post('/users/me/subscriptions/properties', { subscription_data: streams.map((s) => ({ stream_id: s.id, property: 'pin_to_top', value: true })) }),
        )
      },
    },
    {
      route: 'POST /user_groups/create',
      param: 'members',
      prepare: async (n) =>
        sending(admin, () => as(app, admin).post('/user_groups/create', { name: `team ${next()}`, description: 'A team', members: ids(n) })),
    },
    {
      route: 'POST /user_groups/create',
      param: 'subgroups',
      prepare: async (n) => {
        const subgroups = await makeGroups(n)
        return sending(admin, () => as(app, admin).post('/user_groups/create', { name: `team ${next()}`, description: 'A team', members: [], subgroups }))
      },
    },
    {
      route: 'POST /user_groups/:user_group_id/members',
      param: 'add',
      prepare: async (n) => {
        const [group] = await makeGroups(1)
        return sending(admin, () => as(app, admin).post(`/user_groups/${group}/members`, { add: ids(n) }))
      },
    },
    {
      route: 'POST /user_groups/:user_group_id/members',
      param: 'delete',
      prepare: async (n) => {
        const [group = 0] = await makeGroups(1)
        await prisma.userGroupMember.createMany({ data: ids(n).map((userId) => ({ groupId: group, userId })) })
        return sending(admin, () => as(app, admin).post(`/user_groups/${group}/members`, { delete: ids(n) }))
      },
    },
    {
      route: 'POST /user_groups/:user_group_id/members',
      param: 'add_subgroups',
      prepare: async (n) => {
        const [group, ...subgroups] = await makeGroups(n + 1)
        return sending(admin, () => as(app, admin).post(`/user_groups/${group}/members`, { add_subgroups: subgroups }))
      },
    },
    {
      route: 'POST /user_groups/:user_group_id/members',
      param: 'delete_subgroups',
      prepare: async (n) => {
        const [group = 0, ...subgroups] = await makeGroups(n + 1)
        await prisma.userGroupSubgroup.createMany({ data: subgroups.map((subgroupId) => ({ supergroupId: group, subgroupId })) })
        return sending(admin, () => as(app, admin).post(`/user_groups/${group}/members`, { delete_subgroups: subgroups }))
      },
    },
    {
      route: 'POST /user_groups/:user_group_id/subgroups',
      param: 'add',
      prepare: async (n) => {
        const [group, ...subgroups] = await makeGroups(n + 1)
        return sending(admin, () => as(app, admin).post(`/user_groups/${group}/subgroups`, { add: subgroups }))
      },
    },
    {
      route: 'POST /user_groups/:user_group_id/subgroups',
      param: 'delete',
      prepare: async (n) => {
        const [group = 0, ...subgroups] = await makeGroups(n + 1)
        await prisma.userGroupSubgroup.createMany({ data: subgroups.map((subgroupId) => ({ supergroupId: group, subgroupId })) })
        return sending(admin, () => as(app, admin).post(`/user_groups/${group}/subgroups`, { delete: subgroups }))
      },
    },
    // Each distinct event type fetches its own part of the register state
    // (bounded by the number of known types), so both requests name the
    // same two types, the large one repeating them.
    {
      route: 'POST /register',
      param: 'event_types',
      prepare: async (n) => sending(member, () => as(app, member).post('/register', { event_types: repeated(n) })),
    },
    {
      route: 'POST /register',
      param: 'fetch_event_types',
      prepare: async (n) => sending(member, () => as(app, member).post('/register', { event_types: ['message'], fetch_event_types: repeated(n) })),
    },
    {
      route: 'GET /events',
      param: 'event_types',
      prepare: async (n) => sending(member, () => as(app, member).get('/events', { dont_block: true, event_types: repeated(n) })),
    },
    {
      route: 'GET /events',
      param: 'narrow',
      prepare: async (n) =>
        sending(member, () => as(app, member).get('/events', { dont_block: true, event_types: ['message'], narrow: ids(Math.min(n, 20)).map((id) => ['sender', String(id)]) })),
    },
    {
      route: 'POST /register',
      param: 'narrow',
      prepare: async (n) =>
        sending(member, () => as(app, member).post('/register', { event_types: ['message'], narrow: ids(Math.min(n, 20)).map((id) => ['sender', String(id)]) })),
    },
  ]

  for (const c of cases) {
    t.test(`${c.route} ${c.param}: ${SMALL} and ${LARGE} elements run as many statements`, async (t) => {
      const measure = async () => {
        const small = await countStatements(await c.prepare(SMALL))
        await c.after?.()
        const large = await countStatements(await c.prepare(LARGE))
        await c.after?.()
        expectSuccess(t, small.result)
        expectSuccess(t, large.result)
        return { small, large, extra: large.statements.length - small.statements.length }
      }
      let measured = await measure()
      // A statement that depends on timing can land in one request and not the
      // other (on PostgreSQL, the authentication cache is evicted when another
      // request's NOTIFY arrives, so the next request reads its user again). A
      // query per element grows every time: measure once more, keep the smaller.
      if (measured.extra > (c.slack?.count ?? 0)) {
        const again = await measure()
        if (again.extra < measured.extra) measured = again
      }
      const { small, large, extra } = measured
      t.comment(`${c.route} ${c.param}: ${small.statements.length} → ${large.statements.length} statements`)
      t.ok(extra <= (c.slack?.count ?? 0), `${extra} more statements for ${LARGE - SMALL} more elements`, { grown: grown(small.statements, large.statements) })
    })
  }

  t.test('every array parameter of the route table has a case', async (t) => {
    const covered = new Set(cases.map((c) => `${c.route} ${c.param.replace(/[[ .].*$/, '')}`))
    const missing: string[] = []
    for (const r of allRoutes) {
      for (const name of arrayParams(r)) {
        const key = `${r.method} ${r.url} ${name}`
        if (!covered.has(key)) missing.push(key)
      }
    }
    t.same(missing, [])
  })
})

/** `n` event types: two real ones, repeated. */
const repeated = (n: number): string[] => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 'realm_user' : 'subscription'))

/** The statements (by their start) the large request ran more often than the small one, with how many more times. */
function grown(small: string[], large: string[]): Record<string, number> {
  const key = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 160)
  const counts = new Map<string, number>()
  for (const sql of large) counts.set(key(sql), (counts.get(key(sql)) ?? 0) + 1)
  for (const sql of small) counts.set(key(sql), (counts.get(key(sql)) ?? 0) - 1)
  return Object.fromEntries([...counts].filter(([, n]) => n > 0))
}

/** The declared parameters of a route whose schema holds an array anywhere (a list of IDs, objects with lists inside). */
function arrayParams(r: { params: Readonly<Record<string, unknown>> }): string[] {
  const holdsArray = (schema: unknown): boolean => {
    if (typeof schema !== 'object' || schema === null) return false
    if ((schema as { type?: unknown }).type === 'array') return true
    return Object.values(schema).some(holdsArray)
  }
  return Object.entries(r.params)
    .filter(([, schema]) => holdsArray(schema))
    .map(([name]) => name)
}
