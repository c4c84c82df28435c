// Saved snippets (upstream levels 297 and 368): GET/POST /saved_snippets,
// PATCH/DELETE /saved_snippets/{saved_snippet_id}, register's
// `saved_snippets` and the saved_snippets events, with upstream's bounds
// and errors.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { checkStateAfter } from '../support/state-check.js'
import { capture } from './conversation-support.js'
import { MAX_SAVED_SNIPPETS_PER_USER } from '../../src/domain/limits.js'

t.test('saved snippets', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member, otherMember } = fx.users
  const create = async (user: typeof member, title: string, content: string): Promise<number> =>
    expectSuccess(t, await as(app, user).post('/saved_snippets', { title, content })).saved_snippet_id as number
  const list = async (user: typeof member) => expectSuccess(t, await as(app, user).get('/saved_snippets')).saved_snippets as { id: number; date_created: number }[]

  t.test('create, list, edit and delete, with exact envelopes', async (t) => {
    const user = await fx.newUser()
    t.same(expectSuccess(t, await as(app, user).get('/saved_snippets')), { result: 'success', msg: '', saved_snippets: [] })
    const res = await as(app, user).post('/saved_snippets', { title: '  Greeting ', content: '\nHello **there**  ' })
    const body = expectSuccess(t, res)
    t.same(Object.keys(body).sort(), ['msg', 'result', 'saved_snippet_id'])
    const id = body.saved_snippet_id as number
    const second = await create(user, 'Bye', 'See you')
    t.ok(second > id)
    const [first] = await list(user)
    t.type(first?.date_created, 'number')
    t.same(await list(user), [
      { id, title: 'Greeting', content: 'Hello **there**', date_created: first?.date_created },
      { id: second, title: 'Bye', content: 'See you', date_created: (await list(user))[1]?.date_created },
    ], 'oldest first, stripped of surrounding whitespace')
    t.same(expectSuccess(t, await as(app, user).patch(`/saved_snippets/${id}`, { content: 'Hi' })), { result: 'success', msg: '' })
    t.same((await list(user)).map(({ date_created: _d, ...s }) => s), [
      { id, title: 'Greeting', content: 'Hi' },
      { id: second, title: 'Bye', content: 'See you' },
    ], 'only the given field changed')
    expectSuccess(t, await as(app, user).patch(`/saved_snippets/${id}`, { title: 'Hello', content: 'Hello!' }))
    t.same(expectSuccess(t, await as(app, user).delete(`/saved_snippets/${second}`)), { result: 'success', msg: '' })
    t.same((await list(user)).map(({ date_created: _d, ...s }) => s), [{ id, title: 'Hello', content: 'Hello!' }])
    t.same(await list(otherMember), [], "another user's list is their own")
  })

  t.test('events: add, update and remove reach only the owner, in upstream’s shapes', async (t) => {
    let id = 0
    const added = await capture(t, app, [member, otherMember], async () => (id = await create(member, 'T', 'C')))
    const [snippet] = (await list(member)).filter((s) => s.id === id)
    t.same(
      (added.get(member.id) ?? []).map(({ id: _e, ...e }) => e),
      [{ type: 'saved_snippets', op: 'add', saved_snippet: { id, title: 'T', content: 'C', date_created: snippet?.date_created } }],
    )
    t.same(added.get(otherMember.id), [])
    const updated = await capture(t, app, [member], () => as(app, member).patch(`/saved_snippets/${id}`, { title: 'T2' }))
    t.same(
      (updated.get(member.id) ?? []).map(({ id: _e, ...e }) => e),
      [{ type: 'saved_snippets', op: 'update', saved_snippet: { id, title: 'T2', content: 'C', date_created: snippet?.date_created } }],
    )
    const nothing = await capture(t, app, [member], () => as(app, member).patch(`/saved_snippets/${id}`))
    t.same(nothing.get(member.id), [], 'an edit that names no field sends no event')
    const removed = await capture(t, app, [member], () => as(app, member).delete(`/saved_snippets/${id}`))
    t.same((removed.get(member.id) ?? []).map(({ id: _e, ...e }) => e), [{ type: 'saved_snippets', op: 'remove', saved_snippet_id: id }])
  })

  t.test('register: saved_snippets, also alone through fetch_event_types', async (t) => {
    const user = await fx.newUser()
    const id = await create(user, 'Reg', 'Body')
    const reg = expectSuccess(t, await as(app, user).post('/register', { fetch_event_types: ['saved_snippets'] }))
    t.same(reg.saved_snippets.map(({ date_created: _d, ...s }: { date_created: number }) => s), [{ id, title: 'Reg', content: 'Body' }])
    t.notOk('drafts' in reg)
    t.ok('saved_snippets' in expectSuccess(t, await as(app, user).post('/register')), 'in the full register too')
    t.notOk('saved_snippets' in expectSuccess(t, await as(app, user).post('/register', { fetch_event_types: ['drafts'] })))
  })

  t.test('state check: a client applying the events matches a fresh register', async (t) => {
    const user = await fx.newUser()
    let id = 0
    await checkStateAfter(t, app, user, async () => (id = await create(user, 'First', 'one')), { expectTypes: ['saved_snippets/add'] })
    await checkStateAfter(t, app, user, () => as(app, user).patch(`/saved_snippets/${id}`, { title: 'Renamed', content: 'two' }), { expectTypes: ['saved_snippets/update'] })
    await checkStateAfter(t, app, user, () => create(user, 'Second', 'three'), { expectTypes: ['saved_snippets/add'] })
    await checkStateAfter(t, app, user, () => as(app, user).delete(`/saved_snippets/${id}`), { expectTypes: ['saved_snippets/remove'] })
  })

  t.test('bounds and errors as upstream', async (t) => {
    const user = await fx.newUser()
    const post = (params: Record<string, unknown>) => as(app, user).post('/saved_snippets', params)
    expectError(t, await post({ content: 'x' }), { code: 'REQUEST_VARIABLE_MISSING', status: 400, msg: "Missing 'title' argument" })
    expectError(t, await post({ title: 'x' }), { code: 'REQUEST_VARIABLE_MISSING', status: 400, msg: "Missing 'content' argument" })
    expectError(t, await post({ title: '   ', content: 'x' }), { code: 'BAD_REQUEST', status: 400, msg: 'title is too short.' })
    expectError(t, await post({ title: 'x', content: ' \n ' }), { code: 'BAD_REQUEST', status: 400, msg: 'content is too short.' })
    expectError(t, await post({ title: 'x'.repeat(61), content: 'x' }), { code: 'BAD_REQUEST', status: 400, msg: 'title is too long (limit: 60 characters)' })
    expectError(t, await post({ title: 'x', content: 'x'.repeat(10_001) }), { code: 'BAD_REQUEST', status: 400, msg: 'content is too long (limit: 10000 characters)' })
    // Code points, not UTF-16 units; surrounding whitespace does not count.
    const atLimit = await create(user, `  ${'😀'.repeat(60)}  `, 'x'.repeat(10_000))
    expectError(t, await as(app, user).patch(`/saved_snippets/${atLimit}`, { title: '' }), { code: 'BAD_REQUEST', status: 400, msg: 'title is too short.' })
    expectError(t, await as(app, user).patch(`/saved_snippets/${atLimit}`, { content: 'x'.repeat(10_001) }), {
      code: 'BAD_REQUEST', status: 400, msg: 'content is too long (limit: 10000 characters)',
    })
    expectError(t, await post({ title: 'x', content: 'a\u0000b' }), { code: 'BAD_REQUEST', status: 400, msg: 'Message must not contain null bytes' })
    const missing = 2_000_000_000
    for (const res of [
      await as(app, user).patch(`/saved_snippets/${missing}`, { title: 'x' }),
      await as(app, user).delete(`/saved_snippets/${missing}`),
    ]) {
      expectError(t, res, { code: 'BAD_REQUEST', status: 404, msg: 'Saved snippet does not exist.' })
    }
    // As upstream: an edit naming no field answers success without looking the snippet up.
    t.same(expectSuccess(t, await as(app, user).patch(`/saved_snippets/${missing}`)), { result: 'success', msg: '' })
    const others = await create(otherMember, 'Mine', 'mine')
    expectError(t, await as(app, user).patch(`/saved_snippets/${others}`, { title: 'x' }), { code: 'BAD_REQUEST', status: 404, msg: 'Saved snippet does not exist.' })
    expectError(t, await as(app, user).delete(`/saved_snippets/${others}`), { code: 'BAD_REQUEST', status: 404, msg: 'Saved snippet does not exist.' })
    t.same((await list(otherMember)).filter((s) => s.id === others).length, 1, "another user's snippet is untouched")
    expectError(t, await as(app, user).delete('/saved_snippets/abc'), { code: 'BAD_REQUEST', status: 400, msg: /saved_snippet_id/ })
    t.same((await list(user)).length, 1, 'nothing half-applied')
  })

  t.test(`at most ${MAX_SAVED_SNIPPETS_PER_USER} saved snippets per user`, async (t) => {
    const user = await fx.newUser()
    await services.prisma.savedSnippet.createMany({
      data: Array.from({ length: MAX_SAVED_SNIPPETS_PER_USER - 1 }, (_, i) => ({ userId: user.id, title: `t${i}`, content: 'c' })),
    })
    await create(user, 'last', 'fits')
    expectError(t, await as(app, user).post('/saved_snippets', { title: 'one more', content: 'c' }), {
      code: 'BAD_REQUEST', status: 400, msg: `You can have at most ${MAX_SAVED_SNIPPETS_PER_USER} saved snippets.`,
    })
    t.equal((await list(user)).length, MAX_SAVED_SNIPPETS_PER_USER)
  })
})
