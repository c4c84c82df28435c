// A real client of the API, unchanged: zulip-js from npm drives the compiled
// server (started as in npm-start.test.ts). It sends POSTs as
// multipart/form-data and GET parameters in the query string.
import t from 'tap'
import zulipInit from 'zulip-js'
import { startServer } from './start-server.js'

t.test('zulip-js against a running server', async (t) => {
  const server = await startServer()
  t.teardown(() => server.stop())
  const client = await zulipInit({ realm: server.url, username: server.email, apiKey: server.apiKey })

  t.test('users.me.getProfile()', async (t) => {
    t.match(await client.users.me.getProfile(), { result: 'success', email: server.email, user_id: Number })
  })

  t.test('streams.retrieve() lists general', async (t) => {
    const res = await client.streams.retrieve()
    t.match(res, { result: 'success', streams: Array })
    t.ok(((res.streams ?? []) as Array<{ name: string }>).some((s) => s.name === 'general'), 'general is listed')
  })

  t.test('messages.send() then messages.retrieve() finds it', async (t) => {
    const sent = await client.messages.send({ to: 'general', type: 'stream', topic: 'hello', content: 'hi' })
    t.match(sent, { result: 'success', id: Number })
    const got = await client.messages.retrieve({
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [
        { operator: 'stream', operand: 'general' },
        { operator: 'topic', operand: 'hello' },
      ],
    })
    t.match(got, { result: 'success', found_newest: true })
    const messages = (got.messages ?? []) as Array<{ id: number; content: string; subject: string }>
    const mine = messages.find((m) => m.id === sent.id)
    t.ok(mine, 'the sent message is in the narrow')
    t.match(mine, { subject: 'hello', content: /hi/ })
  })
})
