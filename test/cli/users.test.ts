// `roost user list | show | change-email | allow-email-changes` and roles by name, on PostgreSQL
// and Redis next to a running app (test/cli/live.ts).
import t from 'tap'
import { anon, as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { checkStateAfter } from '../support/state-check.js'
import { eventually } from '../support/eventually.js'
import { liveCli } from './live.js'
import { printed } from './run.js'

t.setTimeout(900_000)

interface Listed {
  user_id: number
  organization: string
  delivery_email: string
  role: number
  role_name: string
  is_active: boolean
  is_bot: boolean
}

t.test('roost user list, show and change-email', async (t) => {
  const { app, cli, org } = await liveCli(t)
  const owner = await org('acme', 'Acme')
  await org('bravo', 'Bravo')
  const acme = { host: 'acme.localhost' }
  const make = async (args: string[]) => {
    const res = await cli(['user', 'create', '--org', 'acme', ...args])
    t.equal(res.code, 0, res.stderr)
    return res
  }
  const mo = await make(['--email', 'mo@acme.example.com', '--name', 'Mo Moderator', '--role', 'moderator'])
  await make(['--email', 'gus@acme.example.com', '--name', 'Gus Guest', '--role', '600'])
  await make(['--email', 'dee@acme.example.com', '--name', 'Dee Parted', '--role', 'administrator'])
  t.equal((await cli(['user', 'deactivate', '--org', 'acme', 'dee@acme.example.com'])).code, 0)
  const listJson = async (...args: string[]): Promise<Listed[]> => {
    const res = await cli(['user', 'list', '--json', ...args])
    t.equal(res.code, 0, res.stderr)
    return JSON.parse(res.stdout) as Listed[]
  }
  const emails = (rows: Listed[]) => rows.map((r) => r.delivery_email)

  t.test('roles go by name in help and input; numbers are still accepted', async (t) => {
    const help = await cli(['user', 'create', '--help'])
    t.equal(help.code, 0)
    t.match(help.stdout, /--role <role>\s+owner, administrator, moderator, member or guest\s+\(default:\s+member\)/)
    t.notMatch(help.stdout, '(default: 400)')
    t.match(mo.stdout, /\(user ID \d+, moderator\)/)
    const [bad, badNumber] = await Promise.all([
      cli(['user', 'create', '--org', 'acme', '--email', 'k@acme.example.com', '--name', 'King', '--role', 'king']),
      cli(['user', 'create', '--org', 'acme', '--email', 'k@acme.example.com', '--name', 'King', '--role', '500']),
    ])
    for (const res of [bad, badNumber]) {
      t.equal(res.code, 2)
      t.match(res.stderr, /error: option '--role <role>' argument '(king|500)' is invalid\. '(king|500)' is not a role: owner, administrator, moderator, member or guest/)
    }
  })

  t.test('list: every account, filtered, as JSON or a table', async (t) => {
    const all = await listJson()
    t.same(emails(all.filter((u) => !u.is_bot)), ['boss@acme.example.com', 'mo@acme.example.com', 'gus@acme.example.com', 'dee@acme.example.com', 'boss@bravo.example.com'])
    t.same([...new Set(all.map((u) => u.organization))], ['acme', 'bravo'])
    t.match(all.find((u) => u.delivery_email === 'gus@acme.example.com'), { role: 600, role_name: 'guest', is_active: true, is_bot: false })
    t.same(emails(await listJson('--org', 'acme', '--no-bots')), ['boss@acme.example.com', 'mo@acme.example.com', 'gus@acme.example.com', 'dee@acme.example.com'])
    t.same(emails(await listJson('--org', 'acme', '--role', 'guest')), ['gus@acme.example.com'])
    t.same(emails(await listJson('--org', 'acme', '--deactivated')), ['dee@acme.example.com'])
    t.same(emails(await listJson('--org', 'acme', '--active', '--no-bots')), ['boss@acme.example.com', 'mo@acme.example.com', 'gus@acme.example.com'])
    const bots = await listJson('--bots')
    t.ok(bots.length === 2 && bots.every((u) => u.is_bot), 'each organization has its Notification Bot')

    const table = await cli(['user', 'list', '--org', 'acme', '--no-bots'])
    t.equal(table.code, 0)
    const lines = table.stdout.trimEnd().split('\n')
    t.match(lines[0], /^ID\s+ORGANIZATION\s+EMAIL\s+ROLE\s+STATUS\s+TYPE\s+NAME$/)
    t.match(lines[4], /^\d+\s+acme\s+dee@acme\.example\.com\s+administrator\s+deactivated\s+person\s+Dee Parted$/)
    t.equal(lines.length, 5)

    const limited = await cli(['user', 'list', '--no-bots', '--limit', '2', '--json'])
    t.same(emails(JSON.parse(limited.stdout)), ['boss@acme.example.com', 'mo@acme.example.com'])
    t.equal(limited.stderr, 'roost: note: only the first 2 accounts are listed (--limit)\n')
  })

  t.test('list: mistakes name the option', async (t) => {
    const [both, role, limit, org] = await Promise.all([
      cli(['user', 'list', '--active', '--deactivated']),
      cli(['user', 'list', '--role', 'boss']),
      cli(['user', 'list', '--limit', '0']),
      cli(['user', 'list', '--org', 'nowhere']),
    ])
    t.equal(both.code, 2)
    t.match(both.stderr, "error: option '--active' cannot be used with option '--deactivated'")
    t.equal(role.code, 2)
    t.match(role.stderr, "error: option '--role <role>' argument 'boss' is invalid")
    t.equal(limit.code, 2)
    t.match(limit.stderr, "error: option '--limit <n>' argument '0' is invalid. '0' is not a whole number from 1 to 100000.")
    t.equal(org.code, 1)
    t.equal(org.stderr, "roost: no organization with the subdomain 'nowhere' (see 'roost org list')\n")
  })

  t.test('show: by email in an organization or by ID', async (t) => {
    const byEmail = await cli(['user', 'show', '--org', 'acme', 'MO@acme.example.com'])
    t.equal(byEmail.code, 0, byEmail.stderr)
    const id = printed(byEmail.stdout, 'user ID')
    t.equal(printed(byEmail.stdout, 'email'), 'mo@acme.example.com')
    t.equal(printed(byEmail.stdout, 'role'), 'moderator')
    t.equal(printed(byEmail.stdout, 'status'), 'active')
    t.equal(printed(byEmail.stdout, 'organization'), 'acme')
    t.equal(printed(byEmail.stdout, 'last login'), 'never')
    const byId = await cli(['user', 'show', id, '--json'])
    t.equal(byId.code, 0, byId.stderr)
    t.match(JSON.parse(byId.stdout), { user_id: Number(id), organization: 'acme', delivery_email: 'mo@acme.example.com', full_name: 'Mo Moderator', role: 300, role_name: 'moderator' })
    t.notMatch(byId.stdout, /api_key|password/)
    const [wrongOrg, unknownId, unknownEmail, pattern] = await Promise.all([
      cli(['user', 'show', '--org', 'bravo', id]),
      cli(['user', 'show', '999999']),
      cli(['user', 'show', '--org', 'acme', 'ghost@acme.example.com']),
      cli(['user', 'show', '--org', 'acme', 'm_@acme.example.com']),
    ])
    t.equal(wrongOrg.code, 1)
    t.equal(wrongOrg.stderr, `roost: no user with the ID ${id} in the organization 'Bravo'\n`)
    t.equal(unknownId.code, 1)
    t.equal(unknownId.stderr, 'roost: no user with the ID 999999\n')
    t.equal(unknownEmail.code, 1)
    t.equal(unknownEmail.stderr, "roost: no user with the email 'ghost@acme.example.com' in the organization 'Acme'\n")
    t.equal(pattern.code, 1, 'the address is matched exactly, never as a pattern')
  })

  t.test("change-email changes the address and the API email, and tells the organization's clients", async (t) => {
    let res = { code: 0 as number | null, stdout: '', stderr: '' }
    const events = await checkStateAfter(t, app, owner, async () => (res = await cli(['user', 'change-email', '--org', 'acme', 'mo@acme.example.com', 'mo.new@acme.example.com'])), {
      expectTypes: ['realm_user/update'],
    })
    t.equal(res.code, 0, res.stderr)
    t.match(res.stdout, /^mo@acme\.example\.com → mo\.new@acme\.example\.com \(user ID \d+\)\n$/)
    const id = Number(/user ID (\d+)/.exec(res.stdout)?.[1])
    t.match(
      events.filter((e) => e.type === 'realm_user'),
      [
        { type: 'realm_user', op: 'update', person: { user_id: id, delivery_email: 'mo.new@acme.example.com' } },
        { type: 'realm_user', op: 'update', person: { user_id: id, avatar_source: 'G', avatar_url: /^https:\/\/secure\.gravatar\.com\/avatar\// } },
        { type: 'realm_user', op: 'update', person: { user_id: id, new_email: 'mo.new@acme.example.com' } },
      ],
    )
    const password = printed((await cli(['user', 'reset-password', '--org', 'acme', 'mo.new@acme.example.com'])).stdout, 'password')
    expectSuccess(t, await anon(app, acme).post('/fetch_api_key', { username: 'mo.new@acme.example.com', password }))
    expectError(t, await anon(app, acme).post('/fetch_api_key', { username: 'mo@acme.example.com', password }), { code: 'AUTHENTICATION_FAILED', status: 401 })
    const users = expectSuccess(t, await as(app, owner).get('/users')).members as { user_id: number; email: string }[]
    t.equal(users.find((u) => u.user_id === id)?.email, 'mo.new@acme.example.com')
  })

  t.test('change-email refuses a taken or invalid address, matched exactly', async (t) => {
    const [taken, takenOtherCase, invalid, missing, unknown] = await Promise.all([
      cli(['user', 'change-email', '--org', 'acme', 'gus@acme.example.com', 'boss@acme.example.com']),
      cli(['user', 'change-email', '--org', 'acme', 'gus@acme.example.com', 'BOSS@acme.example.com']),
      cli(['user', 'change-email', '--org', 'acme', 'gus@acme.example.com', 'not-an-address']),
      cli(['user', 'change-email', '--org', 'acme', 'gus@acme.example.com']),
      cli(['user', 'change-email', '--org', 'acme', 'ghost@acme.example.com', 'g@acme.example.com']),
    ])
    t.equal(taken.code, 1)
    t.equal(taken.stderr, "roost: Email 'boss@acme.example.com' already in use\n")
    t.equal(takenOtherCase.code, 1)
    t.equal(invalid.code, 1)
    t.equal(invalid.stderr, 'roost: Enter a valid email address.\n')
    t.equal(missing.code, 2)
    t.match(missing.stderr, "error: missing required argument 'new-email'")
    t.equal(unknown.code, 1)
    // `_` is no wildcard: boss@ does not make bos_@ taken.
    const pattern = await cli(['user', 'change-email', '--org', 'acme', 'gus@acme.example.com', 'bos_@acme.example.com'])
    t.equal(pattern.code, 0, pattern.stderr)
    // The same address in another organization is no conflict.
    const elsewhere = await cli(['user', 'change-email', '--org', 'bravo', 'boss@bravo.example.com', 'boss@acme.example.com'])
    t.equal(elsewhere.code, 0, elsewhere.stderr)
  })
  t.test('allow-email-changes grants and revokes can_change_user_emails: only then may the owner change addresses through the API', async (t) => {
    const me = expectSuccess(t, await as(app, owner).get('/users/me'))
    const members = expectSuccess(t, await as(app, owner).get('/users')).members as { user_id: number; full_name: string }[]
    const target = members.find((u) => u.full_name === 'Gus Guest') as { user_id: number }
    const NOT_AUTHORIZED = { code: 'BAD_REQUEST', status: 400, msg: 'User not authorized to change user emails' }
    expectError(t, await as(app, owner, acme).patch(`/users/${target.user_id}`, { new_email: 'gus.api@acme.example.com' }), NOT_AUTHORIZED)
    const granted = await cli(['user', 'allow-email-changes', '--org', 'acme', String(me.delivery_email)])
    t.equal(granted.code, 0, granted.stderr)
    t.equal(granted.stdout, `${String(me.delivery_email)}: can_change_user_emails granted\n`)
    // The grant reaches the app's authentication cache through PostgreSQL's NOTIFY, which can take a moment:
    // an address that is not one is a probe that changes nothing (permission is checked first).
    const probe = async () => JSON.parse((await as(app, owner, acme).patch(`/users/${target.user_id}`, { new_email: 'not an address' })).body).msg as string
    await eventually('the grant is seen', async () => (await probe()) === 'Enter a valid email address.', { intervalMs: 50 })
    expectSuccess(t, await as(app, owner, acme).patch(`/users/${target.user_id}`, { new_email: 'gus.api@acme.example.com' }))
    t.equal((expectSuccess(t, await as(app, owner).get(`/users/${target.user_id}`)).user as { delivery_email: string }).delivery_email, 'gus.api@acme.example.com')
    const revoked = await cli(['user', 'allow-email-changes', '--org', 'acme', '--revoke', String(me.delivery_email)])
    t.equal(revoked.code, 0, revoked.stderr)
    t.equal(revoked.stdout, `${String(me.delivery_email)}: can_change_user_emails revoked\n`)
    await eventually('the revocation is seen', async () => (await probe()) === NOT_AUTHORIZED.msg, { intervalMs: 50 })
    expectError(t, await as(app, owner, acme).patch(`/users/${target.user_id}`, { new_email: 'gus.again@acme.example.com' }), NOT_AUTHORIZED)
    const unknown = await cli(['user', 'allow-email-changes', '--org', 'acme', 'ghost@acme.example.com'])
    t.equal(unknown.code, 1)
  })
})
