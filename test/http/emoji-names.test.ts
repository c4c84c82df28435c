// Upstream's Unicode emoji names in reactions and statuses, and the
// server_emoji_data_url document a client's emoji picker is built from.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { messageAs, sendTo } from './conversation-support.js'

t.test('Unicode emoji names', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { owner, member, guest } = fx.users

  t.test('reactions accept upstream names, aliases and codes, as the clients send them', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'names', 'react')
    // What a picker built from code_to_names sends: the name shown, the code, the type.
    for (const [name, code] of [
      ['thumbs_up', '1f44d'],
      ['heart', '2764'],
      ['working_on_it', '1f6e0'],
      ['octopus', '1f419'],
      ['tada', '1f389'],
    ]) {
      expectSuccess(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: name, emoji_code: code, reaction_type: 'unicode_emoji' }))
    }
    // A name alone, the way zulip-terminal and simple bots react.
    expectSuccess(t, await as(app, owner).post(`/messages/${id}/reactions`, { emoji_name: 'like' }))
    const reactions = (await messageAs(t, app, owner, id)).reactions as { emoji_name: string; emoji_code: string; user_id: number }[]
    t.same(
      reactions.map((r) => [r.emoji_name, r.emoji_code, r.user_id]),
      [
        ['thumbs_up', '1f44d', member.id],
        ['heart', '2764', member.id],
        ['working_on_it', '1f6e0', member.id],
        ['octopus', '1f419', member.id],
        ['tada', '1f389', member.id],
        ['thumbs_up', '1f44d', owner.id],
      ],
      "a vote for an existing reaction keeps that reaction's name",
    )
  })

  t.test('names the dataset has but upstream does not are rejected, naming the emoji', async (t) => {
    const id = await sendTo(t, app, member, 'general', 'names', 'bad names')
    expectError(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'thumbsup' }), {
      code: 'BAD_REQUEST',
      msg: "Emoji 'thumbsup' does not exist",
    })
    expectError(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'thumbsup', emoji_code: '1f44d', reaction_type: 'unicode_emoji' }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid emoji name.',
    })
    expectError(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'heart', emoji_code: '2764-fe0f', reaction_type: 'unicode_emoji' }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid emoji code.',
    })
    expectError(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: 'clock1', emoji_code: '1f550', reaction_type: 'unicode_emoji' }), {
      code: 'BAD_REQUEST',
      msg: 'Invalid emoji code.',
    })
  })

  t.test('statuses take the same names', async (t) => {
    expectSuccess(t, await as(app, member).post('/users/me/status', { status_text: 'fixing', emoji_name: 'working_on_it' }))
    const status = expectSuccess(t, await as(app, owner).get(`/users/${member.id}/status`)).status
    t.same(status, { status_text: 'fixing', emoji_name: 'working_on_it', emoji_code: '1f6e0', reaction_type: 'unicode_emoji' })
    expectError(t, await as(app, member).post('/users/me/status', { emoji_name: 'slightly_smiling_face' }), {
      code: 'BAD_REQUEST',
      msg: "Emoji 'slightly_smiling_face' does not exist",
    })
  })

  t.test('register names the emoji data document; it lists every accepted name, canonical first', async (t) => {
    const state = expectSuccess(t, await as(app, guest).post('/register', { fetch_event_types: ['realm'] }))
    const url = new URL(state.server_emoji_data_url as string)
    t.equal(url.origin, `http://${fx.realm.stringId}.localhost:9991`, 'absolute, under the realm URL')
    t.match(url.pathname, /^\/static\/generated\/emoji\/emoji_api\.[0-9a-f]{16}\.json$/)
    t.notOk('server_emoji_data_url' in expectSuccess(t, await as(app, guest).post('/register', { fetch_event_types: ['message'] })), 'only with realm')

    // Fetched without credentials, as zulip-flutter does.
    const res = await app.inject({ method: 'GET', url: url.pathname, headers: { host: fx.host } })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/)
    t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable')
    const doc = bodyOf(res)
    t.same(Object.keys(doc), ['code_to_names'], 'nothing but code_to_names, as ServerEmojiData parses it')
    t.same(doc.code_to_names['1f44d'], ['+1', 'thumbs_up', 'like'])
    t.same(doc.code_to_names['1f642'], ['smile'])
    t.same(doc.code_to_names['1f6e0'], ['working_on_it', 'hammer_and_wrench', 'tools'])
    t.ok(Object.keys(doc.code_to_names).length > 1800)

    // Every name in the document is accepted with its code, and nothing else names that code.
    const id = await sendTo(t, app, member, 'general', 'names', 'every name')
    const samples = Object.entries(doc.code_to_names as Record<string, string[]>).filter((_, i) => i % 97 === 0)
    for (const [code, names] of samples) {
      const name = names[names.length - 1] as string
      expectSuccess(t, await as(app, member).post(`/messages/${id}/reactions`, { emoji_name: name, emoji_code: code, reaction_type: 'unicode_emoji' }))
    }

    const again = await app.inject({ method: 'GET', url: url.pathname, headers: { host: fx.host, 'if-none-match': res.headers.etag as string } })
    t.equal(again.statusCode, 304, 'revalidation by ETag')
    const stale = await app.inject({ method: 'GET', url: '/static/generated/emoji/emoji_api.0000000000000000.json', headers: { host: fx.host } })
    t.equal(stale.statusCode, 404)
  })
})
