import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'

const names = (body: Body) => (body.streams as Body[]).map((s) => s.name)

t.test('GET /streams', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, otherMember, guest, bot } = fx.users

  t.test('lists public and subscribed channels sorted by name', async (t) => {
    t.same(names(expectSuccess(t, await as(app, member).get('/streams'))), ['design', 'general', 'secret'])
    t.same(names(expectSuccess(t, await as(app, otherMember).get('/streams'))), ['design', 'general'])
  })

  t.test('describes each channel with the spec fields', async (t) => {
    const design = (expectSuccess(t, await as(app, member).get('/streams')).streams as Body[])[0] as Body
    t.same(Object.keys(design).sort(), [
      'can_add_subscribers_group', 'can_administer_channel_group', 'can_remove_subscribers_group', 'can_send_message_group', 'can_subscribe_group',
      'creator_id', 'date_created', 'description', 'first_message_id', 'history_public_to_subscribers',
      'invite_only', 'is_announcement_only', 'is_archived', 'is_recently_active', 'is_web_public', 'message_retention_days', 'name', 'rendered_description', 'stream_id',
      'stream_post_policy', 'stream_weekly_traffic',
    ])
    t.match(design, {
      stream_id: fx.streams.design.id, description: 'Design talk', rendered_description: '<p>Design talk</p>', creator_id: owner.id,
      date_created: Math.floor(fx.streams.design.dateCreated.getTime() / 1000), stream_weekly_traffic: null, is_archived: false, is_recently_active: true,
    })
  })

  t.test('shows guests only their own channels unless asked for web-public ones', async (t) => {
    t.same(names(expectSuccess(t, await as(app, guest).get('/streams'))), ['general'])
    await services.prisma.stream.create({
      data: { realmId: fx.realm.id, name: 'webby', isWebPublic: true, canRemoveSubscribersGroupId: fx.streams.general.canRemoveSubscribersGroupId },
    })
    t.same(names(expectSuccess(t, await as(app, guest).get('/streams', { include_web_public: true }))), ['general', 'webby'])
  })

  t.test('combines the include flags', async (t) => {
    t.same(names(expectSuccess(t, await as(app, member).get('/streams', { include_public: false }))), ['design', 'general', 'secret'])
    t.same(names(expectSuccess(t, await as(app, otherMember).get('/streams', { include_public: false }))), ['general'])
    t.same(names(expectSuccess(t, await as(app, member).get('/streams', { include_public: false, include_subscribed: false }))), [])
  })

  t.test('include_all (level 356; include_all_active its old name): every channel the user may know of', async (t) => {
    t.same(names(expectSuccess(t, await as(app, admin).get('/streams', { include_all: true }))), ['design', 'general', 'secret', 'webby'])
    t.same(names(expectSuccess(t, await as(app, admin).get('/streams', { include_all_active: true }))), ['design', 'general', 'secret', 'webby'])
    t.same(names(expectSuccess(t, await as(app, member).get('/streams', { include_all: true, include_public: false, include_subscribed: false }))), ['design', 'general', 'secret', 'webby'])
    t.same(names(expectSuccess(t, await as(app, otherMember).get('/streams', { include_all: true }))), ['design', 'general', 'webby'])
    t.same(names(expectSuccess(t, await as(app, guest).get('/streams', { include_all: true }))), ['general', 'webby'])
    expectError(t, await as(app, admin).get('/streams', { include_all: true, include_all_active: true }), { code: 'REQUEST_CONFUSING_VAR', status: 400 })
  })

  t.test('include_can_access_content (level 356): every channel whose messages the user may read', async (t) => {
    // An administrator may know of a private channel without reading it.
    t.same(names(expectSuccess(t, await as(app, admin).get('/streams', { include_can_access_content: true }))), ['design', 'general', 'webby'])
    t.same(names(expectSuccess(t, await as(app, member).get('/streams', { include_can_access_content: true }))), ['design', 'general', 'secret', 'webby'])
    t.same(names(expectSuccess(t, await as(app, guest).get('/streams', { include_can_access_content: true }))), ['general', 'webby'])
  })

  t.test('marks default channels when asked', async (t) => {
    const streams = expectSuccess(t, await as(app, member).get('/streams', { include_default: true })).streams as Body[]
    t.same(streams.map((s) => [s.name, s.is_default]), [['design', false], ['general', true], ['secret', false], ['webby', false]])
    t.notOk('is_default' in ((expectSuccess(t, await as(app, member).get('/streams')).streams as Body[])[0] as Body))
  })

  t.test("adds a bot owner's channels with include_owner_subscribed", async (t) => {
    const plain = names(expectSuccess(t, await as(app, bot).get('/streams', { include_public: false })))
    t.same(plain, [])
    t.same(names(expectSuccess(t, await as(app, bot).get('/streams', { include_public: false, include_owner_subscribed: true }))), ['design', 'general', 'secret'])
  })

  t.test('rejects a non-boolean flag', async (t) => {
    expectError(t, await as(app, member).get('/streams', { include_public: 'often' }), { code: 'BAD_REQUEST', msg: 'include_public is not a boolean' })
  })
})

t.test('GET /streams/{stream_id}', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { admin, member, otherMember } = fx.users

  t.test('returns one channel', async (t) => {
    const body = expectSuccess(t, await as(app, otherMember).get(`/streams/${fx.streams.design.id}`))
    t.match(body.stream, { stream_id: fx.streams.design.id, name: 'design', invite_only: false })
  })

  t.test('hides private channels from non-members but not from administrators', async (t) => {
    expectError(t, await as(app, otherMember).get(`/streams/${fx.streams.secret.id}`), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    t.match(expectSuccess(t, await as(app, admin).get(`/streams/${fx.streams.secret.id}`)).stream, { name: 'secret', invite_only: true })
    t.match(expectSuccess(t, await as(app, member).get(`/streams/${fx.streams.secret.id}`)).stream, { name: 'secret' })
  })

  t.test('rejects unknown and malformed IDs', async (t) => {
    expectError(t, await as(app, member).get('/streams/999999'), { code: 'BAD_REQUEST', msg: 'Invalid channel ID' })
    expectError(t, await as(app, member).get('/streams/abc'), { code: 'BAD_REQUEST', msg: 'stream_id is not an integer' })
  })
})

t.test('GET /get_stream_id', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember } = fx.users

  t.test('finds a channel by name, case-insensitively', async (t) => {
    t.equal(expectSuccess(t, await as(app, member).get('/get_stream_id', { stream: 'Design' })).stream_id, fx.streams.design.id)
  })

  t.test('answers upstream\'s message for unknown or invisible channels', async (t) => {
    expectError(t, await as(app, member).get('/get_stream_id', { stream: 'nope' }), { code: 'BAD_REQUEST', msg: "Invalid channel name 'nope'" })
    expectError(t, await as(app, otherMember).get('/get_stream_id', { stream: 'secret' }), { code: 'BAD_REQUEST', msg: "Invalid channel name 'secret'" })
  })

  t.test('requires the stream parameter', async (t) => {
    expectError(t, await as(app, member).get('/get_stream_id'), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'stream' argument" })
  })
})
