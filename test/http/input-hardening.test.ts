// Issue 12 items 3 and 4 through the HTTP API: each bad input the review's
// fuzzing turned into a 500 now answers a 4xx envelope naming the parameter;
// uploads with long names work; flags on inaccessible messages change
// nothing; event queues and credential caches are bounded.
import t from 'tap'
import { connect } from 'node:net'
import { mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildTestApp } from '../support/app.js'
import { anon, as, basicAuth } from '../support/client.js'
import { bodyOf, expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'
import { authenticatedHeaderCount } from '../../src/http/auth.js'
import { LocalFileStorage } from '../../src/storage/local-storage.js'

const INT32_OVER = 2 ** 31

t.test('text parameters', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member

  t.test('a NUL byte is rejected with upstream wording for content and topic, naming the parameter elsewhere', async (t) => {
    const send = (extra: Record<string, unknown>) => as(app, member).post('/messages', { type: 'stream', to: 'general', topic: 'nul', content: 'hi', ...extra })
    expectError(t, await send({ content: 'a\u0000b' }), { code: 'BAD_REQUEST', status: 400, msg: 'Message must not contain null bytes' })
    expectError(t, await send({ topic: 'a\u0000b' }), { code: 'BAD_REQUEST', status: 400, msg: 'Topic must not contain null bytes' })
    expectError(t, await as(app, member).patch('/settings', { full_name: 'Ann\u0000' }), { code: 'BAD_REQUEST', status: 400, msg: 'full_name must not contain null bytes' })
    expectError(t, await as(app, member).post('/users/me/alert_words', { alert_words: ['ok', 'x\u0000'] }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: 'alert_words[1] must not contain null bytes',
    })
    expectError(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'search', operand: 'a\u0000' }] }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: 'narrow[0]["operand"] must not contain null bytes',
    })
  })

  t.test('a lone surrogate in a JSON parameter is not valid JSON (as upstream, whose parser refuses it)', async (t) => {
    const res = await as(app, member).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[{"operator":"search","operand":"\\ud800"}]' })
    expectError(t, res, { code: 'BAD_REQUEST', status: 400, msg: 'narrow is not valid JSON' })
    expectError(t, await as(app, member).post('/users/me/alert_words', { alert_words: '["\\udc00x"]' }), { code: 'BAD_REQUEST', status: 400, msg: 'alert_words is not valid JSON' })
  })

  t.test('deeply nested JSON is rejected before anything walks it', async (t) => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000)
    expectError(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: deep }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: 'narrow is nested too deeply (limit: 32 levels)',
    })
  })

  t.test('a trailing backslash in a name is an ordinary character', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: [{ name: 'slash\\' }] }))
    t.same(Object.values(body.subscribed), [['slash\\']])
  })

  // Channel names were matched with ILIKE, where a trailing "\" is an invalid pattern (a 500); now exactly.
  t.test('looking a channel up by a name ending in a backslash', async (t) => {
    t.match(expectSuccess(t, await as(app, member).get('/get_stream_id', { stream: 'slash\\' })), { stream_id: Number })
    expectError(t, await as(app, member).get('/get_stream_id', { stream: 'slash%' }), { code: 'BAD_REQUEST', msg: "Invalid channel name 'slash%'" })
  })
})

t.test('integer and ID parameters', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member

  t.test('integers outside 32 bits are too large or too small, by name', async (t) => {
    expectError(t, await as(app, member).get(`/messages/${INT32_OVER}`), { code: 'BAD_REQUEST', status: 400, msg: 'message_id is too large' })
    expectError(t, await as(app, member).post('/messages/flags', { messages: [1, INT32_OVER], op: 'add', flag: 'read' }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: 'messages[1] is too large',
    })
    expectError(t, await as(app, member).post('/messages/flags', { messages: '[1e400]', op: 'add', flag: 'read' }), { code: 'BAD_REQUEST', status: 400, msg: 'messages[0] is too large' })
    expectError(t, await as(app, member).post('/register', { queue_lifespan_secs: -(2 ** 31) - 1 }), { code: 'BAD_REQUEST', status: 400, msg: 'queue_lifespan_secs is too small' })
    expectError(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 2 ** 53 + 10, num_after: 0 }), { code: 'BAD_REQUEST', status: 400, msg: 'num_before is too large' })
    expectError(t, await as(app, member).get('/messages/1e400'), { code: 'BAD_REQUEST', status: 400, msg: 'message_id is not an integer' })
  })

  t.test('IDs must be positive', async (t) => {
    expectError(t, await as(app, member).post('/user_topics', { stream_id: -1, topic: 'x', visibility_policy: 1 }), { code: 'BAD_REQUEST', status: 400, msg: 'stream_id is not a positive integer' })
    expectError(t, await as(app, member).get('/users/0'), { code: 'BAD_REQUEST', status: 400, msg: 'user_id is not a positive integer' })
    // user_id is an ID or an email there: digits still follow the ID rules.
    expectError(t, await as(app, member).get(`/users/${INT32_OVER}/presence`), { code: 'BAD_REQUEST', status: 400, msg: 'user_id is too large' })
    expectError(t, await as(app, member).get(`/users/${INT32_OVER}`), { code: 'BAD_REQUEST', status: 400, msg: 'user_id is too large' })
    expectError(t, await as(app, member).post('/invites', { invitee_emails: 'a@example.com', stream_ids: [0] }), { code: 'BAD_REQUEST', status: 400, msg: 'stream_ids[0] is not a positive integer' })
  })

  t.test('cursors such as last_event_id keep their negative values', async (t) => {
    const { queue_id } = expectSuccess(t, await as(app, member).post('/register', { event_types: ['message'] }))
    expectSuccess(t, await as(app, member).get('/events', { queue_id, last_event_id: -1, dont_block: true }))
  })
})

t.test('bodies and URLs Fastify or Node reject answer in the envelope', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member

  t.test('a malformed multipart body is a 400, even unauthenticated', async (t) => {
    const payload = '--b\r\nContent-Disposition: form-data; name="username"\r\n\r\nx'
    for (const headers of [{ host: fx.host }, { host: fx.host, authorization: basicAuth(member.deliveryEmail, member.apiKey) }]) {
      const res = await app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', headers: { ...headers, 'content-type': 'multipart/form-data; boundary=b' }, payload })
      expectError(t, res, { code: 'BAD_REQUEST', status: 400, msg: 'Malformed multipart/form-data body' })
    }
    const noBoundary = await app.inject({ method: 'POST', url: '/api/v1/user_uploads', headers: { host: fx.host, 'content-type': 'multipart/form-data' }, payload: 'junk' })
    t.equal(noBoundary.statusCode, 400)
    t.equal(bodyOf(noBoundary).result, 'error')
  })

  t.test('bad percent-encoding in the path is a 400', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/users/%E0%A4%A', headers: { host: fx.host } })
    expectError(t, res, { code: 'BAD_REQUEST', status: 400, msg: 'Invalid URL: bad percent-encoding' })
  })

  t.test('an over-long path segment is a 414', async (t) => {
    const res = await as(app, member).get(`/messages/${'1'.repeat(150)}`)
    expectError(t, res, { code: 'BAD_REQUEST', status: 414, msg: 'URL path segment too long' })
  })

  t.test('unknown paths are 404 and wrong methods 405', async (t) => {
    expectError(t, await as(app, member).get('/no/such/thing'), { code: 'NOT_FOUND', status: 404, msg: 'Endpoint not found' })
    const res = await as(app, member).put('/messages/flags')
    expectError(t, res, { code: 'METHOD_NOT_ALLOWED', status: 405, msg: 'Method Not Allowed' })
  })

  t.test('malformed JSON bodies and unknown content types', async (t) => {
    const headers = { host: fx.host, authorization: basicAuth(member.deliveryEmail, member.apiKey) }
    expectError(t, await app.inject({ method: 'POST', url: '/api/v1/messages', headers: { ...headers, 'content-type': 'application/json' }, payload: '{"a":[1,' }), {
      code: 'INVALID_JSON',
      status: 400,
      msg: 'Malformed JSON',
    })
    expectError(t, await app.inject({ method: 'POST', url: '/api/v1/messages', headers: { ...headers, 'content-type': 'application/x-fuzz' }, payload: 'x' }), {
      code: 'BAD_REQUEST',
      status: 415,
      msg: 'Unsupported content type',
    })
  })

  t.test("oversized headers get a 431 envelope from Node's parser", async (t) => {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET /api/v1/users/me HTTP/1.1\r\nHost: ${fx.host}\r\nX-Junk: ${'a'.repeat(20_000)}\r\n\r\n`)
      })
      let data = ''
      socket.on('data', (chunk) => (data += chunk.toString()))
      socket.on('close', () => resolve(data))
      socket.on('error', (error) => (data ? resolve(data) : reject(error)))
    })
    t.match(raw, /^HTTP\/1\.1 431 /)
    t.same(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)), { result: 'error', msg: 'Request header fields too large', code: 'BAD_REQUEST' })
  })

  t.test('a request with more than one Host header is a 400, whatever their case or order', async (t) => {
    const address = app.server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const auth = basicAuth(member.deliveryEmail, member.apiKey)
    const send = (hostLines: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(`GET /api/v1/users/me HTTP/1.1\r\n${hostLines}Authorization: ${auth}\r\nConnection: close\r\n\r\n`)
        })
        let data = ''
        socket.on('data', (chunk) => (data += chunk.toString()))
        socket.on('close', () => resolve(data))
        socket.on('error', (error) => (data ? resolve(data) : reject(error)))
      })
    const single = await send(`Host: ${fx.host}\r\n`)
    t.match(single, /^HTTP\/1\.1 200 /)
    for (const lines of [`Host: ${fx.host}\r\nHost: ${fx.host}\r\n`, `Host: ${fx.host}\r\nhOST: elsewhere.example\r\n`, `host: elsewhere.example\r\nHost: ${fx.host}\r\n`]) {
      const raw = await send(lines)
      t.match(raw, /^HTTP\/1\.1 400 /, lines)
      t.same(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)), { result: 'error', msg: 'More than one Host header', code: 'BAD_REQUEST' })
    }
  })
})

t.test('uploads', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member
  const upload = (filename: string) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/user_uploads',
      headers: { host: fx.host, authorization: basicAuth(member.deliveryEmail, member.apiKey), 'content-type': 'multipart/form-data; boundary=xyz' },
      payload: `--xyz\r\nContent-Disposition: form-data; name="filename"; filename="${filename}"\r\nContent-Type: image/png\r\n\r\nPNGDATA\r\n--xyz--\r\n`,
    })

  t.test('a name over 255 bytes is truncated as upstream does, keeping the extension, and the file is served', async (t) => {
    const body = expectSuccess(t, await upload(`${'é'.repeat(200)}.png`))
    const name = decodeURIComponent(String(body.url).split('/').pop() ?? '')
    t.equal(name, `${'é'.repeat(125)}.png`, '125 two-byte letters and the extension: 254 bytes, no split character')
    const file = await app.inject({ method: 'GET', url: body.url, headers: { host: fx.host, authorization: basicAuth(member.deliveryEmail, member.apiKey) } })
    t.equal(file.statusCode, 200)
    t.equal(file.body, 'PNGDATA')
    const ascii = expectSuccess(t, await upload(`${'n'.repeat(400)}.tar.gz`))
    t.equal(decodeURIComponent(String(ascii.url).split('/').pop() ?? ''), `${'n'.repeat(400)}.tar`.slice(0, 252) + '.gz')
  })

  t.test('a failed store leaves no file and no empty directory behind', async (t) => {
    const root = await mkdtemp(join(tmpdir(), 'roost-upload-'))
    const storage = new LocalFileStorage(root)
    // A name no file system accepts (256 bytes): the write fails after the directories were made.
    await t.rejects(storage.put(`7/ab/token/${'x'.repeat(256)}`, Buffer.from('data'), 'text/plain'))
    t.same(await readdir(root), [])
    await storage.put('7/ab/kept/a.txt', Buffer.from('data'), 'text/plain')
    await t.rejects(storage.put(`7/ab/token/${'x'.repeat(256)}`, Buffer.from('data'), 'text/plain'))
    t.same(await readdir(join(root, '7', 'ab')), ['kept'], 'directories still in use stay')
    await storage.delete('7/ab/kept/a.txt')
    t.same(await readdir(root), [], 'deleting the last file removes its directories')
  })
})

t.test('POST /messages/flags on messages the user cannot access changes nothing', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { owner, guest } = fx.users
  const secret = bodyOf(await as(app, owner).post('/messages', { type: 'stream', to: fx.streams.secret.name, topic: 't', content: 'hidden' }))
  const secretId = Number(secret.id)
  for (const [op, flag] of [['add', 'read'], ['remove', 'read'], ['add', 'starred'], ['remove', 'starred']]) {
    const events = await captureEvents(
      app,
      guest,
      async () => {
        const res = await as(app, guest).post('/messages/flags', { messages: [secretId], op, flag })
        expectError(t, res, { code: 'BAD_REQUEST', status: 400, msg: 'Invalid message(s)' })
      },
      { expectNone: true },
    )
    t.same(events, [], `${op} ${flag}: no event`)
  }
  expectError(t, await as(app, guest).post('/messages/flags', { messages: [99_999_999], op: 'add', flag: 'read' }), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid message(s)' })
  // The owner can still use it; the guest got no row.
  expectSuccess(t, await as(app, owner).post('/messages/flags', { messages: [secretId], op: 'add', flag: 'starred' }))
  const rows = await app.inject({ method: 'GET', url: `/api/v1/messages/${secretId}`, headers: { host: fx.host, authorization: basicAuth(guest.deliveryEmail, guest.apiKey) } })
  expectError(t, rows, { code: 'BAD_REQUEST', status: 400, msg: 'Invalid message(s)' })
})

t.test('bounded memory', async (t) => {
  t.test('registering past EVENT_QUEUES_PER_USER drops the oldest queue, which answers BAD_EVENT_QUEUE_ID', async (t) => {
    const { app, fx } = await buildTestApp(t, { config: { eventQueuesPerUser: 2 } })
    const member = fx.users.member
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      ids.push(String(expectSuccess(t, await as(app, member).post('/register', { event_types: ['message'] })).queue_id))
      await new Promise((r) => setTimeout(r, 3))
    }
    const other = expectSuccess(t, await as(app, fx.users.owner).post('/register', { event_types: ['message'] }))
    const gone = await as(app, member).get('/events', { queue_id: ids[0], last_event_id: -1, dont_block: true })
    t.same(bodyOf(gone), { result: 'error', msg: `Bad event queue ID: ${ids[0]}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: ids[0] })
    for (const queue_id of ids.slice(1)) expectSuccess(t, await as(app, member).get('/events', { queue_id, last_event_id: -1, dont_block: true }))
    expectSuccess(t, await as(app, fx.users.owner).get('/events', { queue_id: other.queue_id, last_event_id: -1, dont_block: true }))
  })

  t.test('event_types and narrow are limited in size at register; unknown types are accepted as upstream does', async (t) => {
    const { app, fx } = await buildTestApp(t)
    const member = fx.users.member
    const many = Array.from({ length: 101 }, (_, i) => `type_${i}`)
    expectError(t, await as(app, member).post('/register', { event_types: many }), { code: 'BAD_REQUEST', status: 400, msg: 'event_types has too many items (limit: 100)' })
    expectError(t, await as(app, member).post('/register', { event_types: ['x'.repeat(65)] }), { code: 'BAD_REQUEST', status: 400, msg: 'event_types[0] is too long (limit: 64 characters)' })
    const narrow = Array.from({ length: 21 }, () => ['channel', 'general'])
    expectError(t, await as(app, member).post('/register', { narrow }), { code: 'BAD_REQUEST', status: 400, msg: 'narrow has too many items (limit: 20)' })
    expectError(t, await as(app, member).post('/register', { narrow: [['topic', 'x'.repeat(1001)]] }), { code: 'BAD_REQUEST', status: 400, msg: 'narrow[0] is too long (limit: 1000 characters)' })
    expectSuccess(t, await as(app, member).post('/register', { event_types: ['no_such_type', 'message', 'message'] }))
  })

  t.test('requests with junk credentials leave nothing in the credential caches', async (t) => {
    const { app, fx, services } = await buildTestApp(t)
    const member = fx.users.member
    expectSuccess(t, await as(app, member).get('/users/me'))
    const before = { headers: authenticatedHeaderCount(), cache: services.authCache.size }
    for (let i = 0; i < 40; i++) {
      const res = await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { host: fx.host, authorization: basicAuth(`junk${i}@example.com`, `${'k'.repeat(31)}${i % 10}`) } })
      expectError(t, res, { code: 'UNAUTHORIZED', status: 401, msg: 'Invalid API key' })
      expectError(t, await anon(app, fx).request('GET', '/users/me', {}, { headers: { authorization: `Basic ${Buffer.from(`x${i}`).toString('base64')}` } }), {
        code: 'UNAUTHORIZED',
        status: 401,
      })
    }
    t.same({ headers: authenticatedHeaderCount(), cache: services.authCache.size }, before)
  })
})
