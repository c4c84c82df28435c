// The real process, as a person starts it: `npm start` is
// `npm run build && node dist/src/server.js`; npm test has already built, so
// this spawns `node dist/src/server.js` on an empty DATA_DIR and a free port,
// reads the printed demo credentials and uses them over HTTP.
import t from 'tap'
import { basicAuth, startServer } from './start-server.js'

type Json = Record<string, unknown>

async function call(url: string, init: RequestInit = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, init)
  return { status: res.status, body: (await res.json()) as Json }
}

t.test('node dist/src/server.js on an empty DATA_DIR', async (t) => {
  const server = await startServer()
  let stopped = false
  t.teardown(async () => {
    if (!stopped) await server.stop()
  })
  const api = `${server.url}/api/v1`

  t.test('prints the demo owner once', async (t) => {
    t.equal(server.realmName, 'Roost demo')
    t.equal(server.email, 'owner@example.com')
    t.match(server.apiKey, /^[A-Za-z0-9]{32}$/)
    t.ok(server.password.length >= 8, 'a password of some length')
  })

  t.test('GET /healthz answers', async (t) => {
    const res = await fetch(`${server.url}/healthz`)
    t.equal(res.status, 200)
  })

  t.test('GET /server_settings needs no credentials', async (t) => {
    const { status, body } = await call(`${api}/server_settings`)
    t.equal(status, 200)
    t.match(body, { result: 'success', msg: '', realm_name: 'Roost demo', realm_uri: String, authentication_methods: Object })
  })

  t.test('GET /users/me with the printed email and API key', async (t) => {
    const { status, body } = await call(`${api}/users/me`, { headers: { authorization: basicAuth(server.email, server.apiKey) } })
    t.equal(status, 200)
    t.match(body, { result: 'success', msg: '', email: server.email, full_name: String, user_id: Number, role: 100, is_owner: true })
  })

  t.test('GET /users/me with a wrong API key is a 401 envelope', async (t) => {
    const res = await fetch(`${api}/users/me`, { headers: { authorization: basicAuth(server.email, 'x'.repeat(32)) } })
    t.equal(res.status, 401)
    t.ok(res.headers.get('www-authenticate'), 'WWW-Authenticate is set')
    t.match(await res.json(), { result: 'error', msg: String, code: String })
  })

  t.test('POST /fetch_api_key with the printed password returns the printed key', async (t) => {
    const { status, body } = await call(`${api}/fetch_api_key`, {
      method: 'POST',
      body: new URLSearchParams({ username: server.email, password: server.password }),
    })
    t.equal(status, 200)
    t.match(body, { result: 'success', msg: '', api_key: server.apiKey, email: server.email, user_id: Number })
  })

  t.test('POST /fetch_api_key with a wrong password is refused', async (t) => {
    const { status, body } = await call(`${api}/fetch_api_key`, {
      method: 'POST',
      body: new URLSearchParams({ username: server.email, password: `${server.password}-wrong` }),
    })
    t.equal(status, 401)
    t.match(body, { result: 'error', code: String, msg: String })
  })

  t.test('unknown API paths answer in the envelope', async (t) => {
    const { status, body } = await call(`${api}/no_such_endpoint`, { headers: { authorization: basicAuth(server.email, server.apiKey) } })
    t.equal(status, 404)
    t.match(body, { result: 'error', msg: String, code: String })
  })

  t.test('SIGTERM stops it with exit code 0', async (t) => {
    stopped = true
    t.equal(await server.stop(), 0, server.output())
  })
})
