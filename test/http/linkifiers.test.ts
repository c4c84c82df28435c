import t from 'tap'
import { buildTestApp, makeFixture } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess, type Body } from '../support/expect.js'
import { captureEvents } from '../support/events.js'

t.test('realm linkifiers', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner, admin, member, guest } = fx.users
  let issueId = 0

  t.test('an administrator adds one; every user is told', async (t) => {
    const events = await captureEvents(app, guest, async () => {
      const body = expectSuccess(t, await as(app, admin).post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' }))
      issueId = body.id
      t.same(Object.keys(body).sort(), ['id', 'msg', 'result'])
    })
    t.same(events.map(({ id: _id, ...e }) => e), [
      { type: 'realm_linkifiers', realm_linkifiers: [{ id: issueId, pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' }] },
      { type: 'realm_filters', realm_filters: [] },
    ])
    t.same(expectSuccess(t, await as(app, member).get('/realm/linkifiers')).linkifiers, [
      { id: issueId, pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' },
    ])
    const reg = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: ['realm_linkifiers'], client_capabilities: { linkifier_url_template: true } }))
    t.same(reg.realm_linkifiers, [{ id: issueId, pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' }])
  })

  t.test('messages link the matches', async (t) => {
    const sent = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'bugs', content: 'see #123, (#45) and a#6 or #7x' }))
    const row = await services.prisma.message.findUniqueOrThrow({ where: { id: sent.id } })
    t.equal(
      row.renderedContent,
      '<p>see <a href="https://github.com/zulip/zulip/issues/123">#123</a>, (<a href="https://github.com/zulip/zulip/issues/45">#45</a>) and a#6 or #7x</p>',
    )
    const code = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'bugs', content: '`#9` [#10](https://example.com)' }))
    t.notMatch((await services.prisma.message.findUniqueOrThrow({ where: { id: code.id } })).renderedContent, /issues\/(9|10)/)
  })

  t.test('renders without a send link the matches too: POST /messages/render and an edit', async (t) => {
    const issueLink = '<a href="https://github.com/zulip/zulip/issues/8">#8</a>'
    t.equal(expectSuccess(t, await as(app, member).post('/messages/render', { content: 'see #8' })).rendered, `<p>see ${issueLink}</p>`)
    const sent = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'bugs', content: 'plain' }))
    expectSuccess(t, await as(app, member).patch(`/messages/${sent.id}`, { content: 'now #8' }))
    t.equal((await services.prisma.message.findUniqueOrThrow({ where: { id: sent.id } })).renderedContent, `<p>now ${issueLink}</p>`)
  })

  t.test('rejects malformed patterns and templates naming the parameter', async (t) => {
    const bad = async (params: Body, msg: string | RegExp, field: string) => {
      const body = expectError(t, await as(app, admin).post('/realm/filters', params), { code: 'BAD_REQUEST', msg })
      t.same(Object.keys(body.errors), [field])
    }
    await bad({ pattern: '#(?P<id>[0-9]+', url_template: 'https://x/{id}' }, /^Bad regular expression: /, 'pattern')
    await bad({ pattern: '(a)\\1', url_template: 'https://x/' }, /^Bad regular expression: /, 'pattern')
    await bad({ pattern: '(?<=a)b', url_template: 'https://x/' }, /^Bad regular expression: /, 'pattern')
    await bad({ pattern: '((a{100}){100}){100}', url_template: 'https://x/' }, /^Bad regular expression: /, 'pattern')
    await bad({ pattern: '#(?P<id>[0-9]+)', url_template: 'https://x/{id' }, 'Invalid URL template.', 'url_template')
    await bad({ pattern: '#(?P<id>[0-9]+)', url_template: 'https://x/{!id}' }, 'Invalid URL template.', 'url_template')
    await bad({ pattern: '#(?P<id>[0-9]+)', url_template: 'https://x/{other}' }, "Group 'other' in URL template is not present in linkifier pattern.", '__all__')
    await bad({ pattern: '#(?P<id>[0-9]+)-(?P<x>a)', url_template: 'https://x/{id}' }, "Group 'x' in linkifier pattern is not present in URL template.", '__all__')
    await bad({ pattern: '#(?P<id>[0-9]+)', url_template: 'https://example.com/{id}' }, 'Realm filter with this Realm and Pattern already exists.', '__all__')
    expectError(t, await as(app, admin).post('/realm/filters', { pattern: 'a'.repeat(1001), url_template: 'https://x/' }), { code: 'BAD_REQUEST', msg: /pattern/ })
    expectError(t, await as(app, admin).post('/realm/filters', { pattern: 'abc' }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'url_template' argument" })
  })

  t.test('matching stays linear on a pattern that backtracks elsewhere', async (t) => {
    const body = expectSuccess(t, await as(app, admin).post('/realm/filters', { pattern: '(?P<x>(a+)+)b', url_template: 'https://x.example/{x}' }))
    const sent = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'redos', content: 'a'.repeat(5000) + 'c' }))
    t.equal((await services.prisma.message.findUniqueOrThrow({ where: { id: sent.id } })).renderedContent, `<p>${'a'.repeat(5000)}c</p>`)
    expectSuccess(t, await as(app, admin).delete(`/realm/filters/${body.id}`))
  })

  t.test('URL templates other than http(s) or a path are refused, on add and on change', async (t) => {
    const refused = [
      'javascript:alert({n})',
      'JavaScript:alert({n})',
      'vbscript:msgbox({n})',
      'file:///etc/{n}',
      'data:text/html,{n}',
      ' javascript:alert({n})',
      '\u0001javascript:alert({n})',
      '{n}:alert(1)',
      'example.com/{n}',
    ]
    for (const url_template of refused) {
      const added = expectError(t, await as(app, admin).post('/realm/filters', { pattern: 'JS-(?P<n>[0-9]+)', url_template }), { code: 'BAD_REQUEST', msg: 'Invalid URL template.' })
      t.same(added.errors, { url_template: ['Invalid URL template.'] }, url_template)
      const changed = expectError(t, await as(app, admin).patch(`/realm/filters/${issueId}`, { pattern: 'JS-(?P<n>[0-9]+)', url_template }), { code: 'BAD_REQUEST', msg: 'Invalid URL template.' })
      t.same(changed.errors, { url_template: ['Invalid URL template.'] }, url_template)
    }
    t.same(
      expectSuccess(t, await as(app, member).get('/realm/linkifiers')).linkifiers.map((l: Body) => l.url_template),
      ['https://github.com/zulip/zulip/issues/{id}'],
    )
    for (const url_template of ['HTTPS://x.example/{n}', 'http://x.example/{n}', '/#narrow/id/{n}']) {
      const body = expectSuccess(t, await as(app, admin).post('/realm/filters', { pattern: 'OK-(?P<n>[0-9]+)', url_template }))
      expectSuccess(t, await as(app, admin).delete(`/realm/filters/${body.id}`))
    }
  })

  t.test('a stored linkifier with an unsafe scheme is still not linked', async (t) => {
    const row = await services.prisma.realmLinkifier.create({ data: { realmId: fx.realm.id, pattern: 'JS-(?P<n>[0-9]+)', urlTemplate: 'javascript:alert({n})', order: 50 } })
    const sent = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'xss', content: 'JS-1' }))
    t.equal((await services.prisma.message.findUniqueOrThrow({ where: { id: sent.id } })).renderedContent, '<p>JS-1</p>')
    await services.prisma.realmLinkifier.delete({ where: { id: row.id } })
  })

  t.test('PATCH changes one, DELETE removes one', async (t) => {
    const events = await captureEvents(app, member, () => as(app, admin).patch(`/realm/filters/${issueId}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example/{id}' }))
    t.match(events, [{ type: 'realm_linkifiers', realm_linkifiers: [{ id: issueId, url_template: 'https://tracker.example/{id}' }] }, { type: 'realm_filters' }])
    expectError(t, await as(app, admin).patch('/realm/filters/999999', { pattern: 'x', url_template: 'https://x/' }), { code: 'BAD_REQUEST', msg: 'Linkifier not found.' })
    expectError(t, await as(app, admin).patch(`/realm/filters/${issueId}`, { pattern: '(', url_template: 'https://x/' }), { code: 'BAD_REQUEST', msg: /^Bad regular expression/ })
    t.match(expectSuccess(t, await as(app, member).get('/realm/linkifiers')).linkifiers, [{ id: issueId, url_template: 'https://tracker.example/{id}' }])
  })

  t.test('PATCH /realm/linkifiers reorders them', async (t) => {
    const second = expectSuccess(t, await as(app, admin).post('/realm/filters', { pattern: 'PR(?P<n>[0-9]+)', url_template: 'https://pr.example/{n}' })).id
    const events = await captureEvents(app, member, () => as(app, owner).patch('/realm/linkifiers', { ordered_linkifier_ids: [second, issueId] }))
    t.match(events, [{ type: 'realm_linkifiers', realm_linkifiers: [{ id: second }, { id: issueId }] }, { type: 'realm_filters' }])
    t.same((expectSuccess(t, await as(app, member).get('/realm/linkifiers')).linkifiers as Body[]).map((l) => l.id), [second, issueId])
    expectError(t, await as(app, admin).patch('/realm/linkifiers', { ordered_linkifier_ids: [second, second] }), { code: 'BAD_REQUEST', msg: 'The ordered list must not contain duplicated linkifiers' })
    expectError(t, await as(app, admin).patch('/realm/linkifiers', { ordered_linkifier_ids: [second] }), { code: 'BAD_REQUEST', msg: 'The ordered list must enumerate all existing linkifiers exactly once' })
    expectError(t, await as(app, admin).patch('/realm/linkifiers', { ordered_linkifier_ids: 'nope' }), { code: 'BAD_REQUEST', msg: /ordered_linkifier_ids/ })
    expectSuccess(t, await as(app, admin).delete(`/realm/filters/${second}`))
    expectError(t, await as(app, admin).delete(`/realm/filters/${second}`), { code: 'BAD_REQUEST', msg: 'Linkifier not found.' })
  })

  t.test('only administrators change linkifiers; nothing crosses organizations', async (t) => {
    for (const who of [member, guest]) {
      expectError(t, await as(app, who).post('/realm/filters', { pattern: 'Z(?P<n>[0-9]+)', url_template: 'https://z/{n}' }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
      expectError(t, await as(app, who).delete(`/realm/filters/${issueId}`), { code: 'UNAUTHORIZED_PRINCIPAL' })
      expectError(t, await as(app, who).patch('/realm/linkifiers', { ordered_linkifier_ids: [issueId] }), { code: 'UNAUTHORIZED_PRINCIPAL' })
    }
    const other = await makeFixture(services)
    expectError(t, await as(app, other.users.owner, other).delete(`/realm/filters/${issueId}`), { code: 'BAD_REQUEST', msg: 'Linkifier not found.' })
    t.same(expectSuccess(t, await as(app, other.users.owner, other).get('/realm/linkifiers')).linkifiers, [])
  })
})
