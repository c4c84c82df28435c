// `roost org rename | deactivate | reactivate` on PostgreSQL and Redis, next
// to a running app (test/cli/live.ts): what each prints, its exit code, the
// events the app's clients get, and what the API then accepts or refuses.
import t from 'tap'
import { anon, as } from '../support/client.js'
import { expectError, expectSuccess, bodyOf } from '../support/expect.js'
import { checkStateAfter } from '../support/state-check.js'
import { checkEventSchemas } from '../support/events.js'
import { eventually } from '../support/eventually.js'
import { json, logIn } from '../support/browser.js'
import { liveCli } from './live.js'

t.setTimeout(900_000)

t.test('roost org rename, deactivate and reactivate', async (t) => {
  const { app, services, cli, org } = await liveCli(t)
  const owner = await org('acme', 'Acme')
  const other = await org('bravo', 'Bravo')
  const acme = { host: 'acme.localhost' }

  t.test('rename changes the name through the action and tells every client', async (t) => {
    let res = { code: 0 as number | null, stdout: '', stderr: '' }
    await checkStateAfter(t, app, owner, async () => (res = await cli(['org', 'rename', 'acme', '--name', 'Acme Inc'])), { expectTypes: ['realm/update'] })
    t.equal(res.code, 0, res.stderr)
    t.equal(res.stdout, "renamed 'Acme' to 'Acme Inc'\n")
    t.equal(expectSuccess(t, await anon(app, acme).get('/server_settings')).realm_name, 'Acme Inc')
    const same = await cli(['org', 'rename', 'acme', '--name', 'Acme Inc'])
    t.equal(same.code, 0)
    t.equal(same.stdout, "the organization is already named 'Acme Inc'\n")
  })

  t.test('rename refuses a bad name and names what is missing', async (t) => {
    const [long, missing, noOrg, unknown] = await Promise.all([
      cli(['org', 'rename', 'acme', '--name', 'x'.repeat(41)]),
      cli(['org', 'rename', 'acme']),
      cli(['org', 'rename', '--name', 'Nope']),
      cli(['org', 'rename', 'nowhere', '--name', 'Nope']),
    ])
    t.equal(long.code, 1)
    t.match(long.stderr, /^roost: .*name/)
    t.equal(missing.code, 2)
    t.match(missing.stderr, "error: required option '--name <name>' not specified")
    t.equal(noOrg.code, 2)
    t.match(noOrg.stderr, "error: missing required argument 'org'")
    t.equal(unknown.code, 1)
    t.match(unknown.stderr, "roost: no organization with the subdomain 'nowhere'")
    t.equal(expectSuccess(t, await anon(app, acme).get('/server_settings')).realm_name, 'Acme Inc')
  })

  t.test('deactivate ends API keys and browser sessions, and releases held long-polls with the event', async (t) => {
    const session = await logIn(app, acme, owner.deliveryEmail, owner.password)
    expectSuccess(t, await json(app, acme, session, 'GET', '/users/me'))
    const reg = expectSuccess(t, await as(app, owner).post('/register', { event_types: ['realm'] }))
    // A long-poll held by the app while the command runs.
    const held = as(app, owner).get('/events', { queue_id: reg.queue_id, last_event_id: reg.last_event_id })
    await eventually('the long-poll held', () => services.events.heldPolls, { until: (n) => n === 1 })
    const res = await cli(['org', 'deactivate', 'acme'])
    t.equal(res.code, 0, res.stderr)
    t.equal(res.stdout, "deactivated the organization 'Acme Inc' at http://acme.localhost:9991\n")
    const polled = bodyOf(await held)
    t.equal(polled.result, 'success')
    const events = polled.events.filter((e: { type: string }) => e.type !== 'heartbeat')
    checkEventSchemas(events)
    t.match(events, [{ type: 'realm', op: 'deactivated', realm_id: Number }])
    t.equal(events.length, 1)

    const me = () => as(app, owner).get('/users/me')
    expectError(t, await eventually('the key refused', me, { until: (r) => r.statusCode === 401 }), { code: 'REALM_DEACTIVATED', status: 401, msg: 'This organization has been deactivated' })
    expectError(t, await json(app, acme, session, 'GET', '/users/me'), { code: 'UNAUTHORIZED', status: 401 })
    expectError(t, await anon(app, acme).post('/fetch_api_key', { username: owner.deliveryEmail, password: owner.password }), { code: 'REALM_DEACTIVATED', status: 401 })
    expectSuccess(t, await as(app, other).get('/users/me'))
    const list = await cli(['org', 'list'])
    t.match(list.stdout, 'acme\thttp://acme.localhost:9991\t1\tAcme Inc (deactivated)')

    const again = await cli(['org', 'deactivate', 'acme'])
    t.equal(again.code, 1)
    t.equal(again.stderr, 'roost: The organization is already deactivated\n')
  })

  t.test('reactivate lets the API keys in again; the ended sessions stay ended', async (t) => {
    const res = await cli(['org', 'reactivate', 'acme'])
    t.equal(res.code, 0, res.stderr)
    t.equal(res.stdout, "reactivated the organization 'Acme Inc' at http://acme.localhost:9991\n")
    const me = () => as(app, owner).get('/users/me')
    expectSuccess(t, await eventually('the key accepted', me, { until: (r) => r.statusCode === 200 }))
    const again = await cli(['org', 'reactivate', 'acme'])
    t.equal(again.code, 1)
    t.equal(again.stderr, 'roost: The organization is already active\n')
  })
})
