// `roost export` and `roost import` as an operator runs them (in this process,
// test/cli/run.ts) against throwaway PostgreSQL databases, next to Roost apps
// over the same databases: an organization with every kind of object built
// through the API is exported, the archive's layout checked against
// upstream's export format, then imported into a fresh server and compared
// through the API.
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { extract } from 'tar'
import { printed } from './run.js'
import { liveCli, type LiveCli } from './live.js'
import { snapshot } from './org-snapshot.js'
import { buildFixtureOrganization, FIXTURE_UPLOAD } from './org-fixture.js'

t.setTimeout(900_000)

type Server = LiveCli

async function startServer(t: { teardown(fn: () => unknown): void }, scratch: string, name: string): Promise<Server> {
  return liveCli(t, { dataDir: path.join(scratch, name) })
}

t.test('export and import', async (t) => {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'roost-export-test-'))
  t.teardown(() => rm(scratch, { recursive: true, force: true }))
  const source = await startServer(t, scratch, 'source')
  const { people } = await buildFixtureOrganization(t, source.app, source.cli, 'acme')
  const archive = path.join(scratch, 'acme.tar.gz')

  t.test('export writes the organization in upstream’s layout, without secrets', async (t) => {
    const res = await source.cli(['export', 'acme', '--output', archive])
    t.equal(res.code, 0, res.stderr)
    t.match(res.stdout, `exported 'Export Co' to ${archive}: 4 users, 3 channels, 8 messages, 3 files`)
    t.match(res.stderr, 'exporting messages')
    t.equal((await stat(archive)).mode & 0o777, 0o600, 'the archive is readable by its owner alone')
    const out = path.join(scratch, 'unpacked')
    await import('node:fs/promises').then((fs) => fs.mkdir(out))
    await extract({ file: archive, cwd: out })
    t.same(await readdir(out), ['zulip-export-acme'])
    const dir = path.join(out, 'zulip-export-acme')
    t.same((await readdir(dir)).sort(), ['attachment.json', 'avatars', 'emoji', 'messages-000001.json', 'realm.json', 'realm_icons', 'uploads'])
    const realm = JSON.parse(await readFile(path.join(dir, 'realm.json'), 'utf8')) as Record<string, Record<string, unknown>[]>
    t.match(realm.zerver_realm, [{ string_id: 'acme', name: 'Export Co', description: 'We **export** things.', mandatory_topics: true, message_content_edit_limit_seconds: 1200 }])
    t.same(realm.zerver_userprofile!.map((u) => u.delivery_email).sort(), people.map((p) => p.deliveryEmail).sort())
    t.same(realm.zerver_stream!.map((s) => s.name).sort(), ['design', 'general', 'secret plans'])
    t.match(realm.zerver_namedusergroup, [{ name: 'role:owners', is_system_group: true }])
    t.ok(realm.zerver_namedusergroup!.some((g) => g.name === 'reviewers'))
    t.match(realm.zerver_realmemoji, [{ name: 'party_parrot', is_animated: false }])
    t.equal(realm.zerver_reaction!.length, 2)
    t.equal(realm.zerver_huddle!.length, 1)
    t.same(realm.zerver_userprofile_crossrealm!.map((u) => u.email), ['notification-bot@acme.localhost.invalid'])
    const messages = JSON.parse(await readFile(path.join(dir, 'messages-000001.json'), 'utf8')) as Record<string, Record<string, unknown>[]>
    t.same(messages.zerver_message!.map((m) => m.subject), ['channel events', 'channel events', 'logo', 'logo', 'colors', 'launch', '', ''])
    t.ok(messages.zerver_usermessage!.every((um) => typeof um.flags_mask === 'number'))
    const attachments = JSON.parse(await readFile(path.join(dir, 'attachment.json'), 'utf8')) as { zerver_attachment: { path_id: string; messages: number[] }[] }
    t.equal(attachments.zerver_attachment.length, 1)
    const upload = attachments.zerver_attachment[0]!
    t.same(await readFile(path.join(dir, 'uploads', upload.path_id)), FIXTURE_UPLOAD)
    t.match(JSON.parse(await readFile(path.join(dir, 'uploads/records.json'), 'utf8')), [{ path: upload.path_id, s3_path: upload.path_id }])
    t.match(JSON.parse(await readFile(path.join(dir, 'avatars/records.json'), 'utf8')), [{ user_profile_id: people[2]!.id }])
    t.match(JSON.parse(await readFile(path.join(dir, 'emoji/records.json'), 'utf8')), [{ name: 'party_parrot' }])
    const everything = (await readFile(path.join(dir, 'realm.json'), 'utf8')) + (await readFile(path.join(dir, 'messages-000001.json'), 'utf8'))
    for (const p of people) t.notOk(everything.includes(p.apiKey), 'no API key is exported')
    t.notMatch(everything, /argon2|password_hash|api_key/)
  })

  t.test('import into a fresh server gives the same organization through the API', async (t) => {
    const target = await startServer(t, scratch, 'target')
    const res = await target.cli(['import', archive])
    t.equal(res.code, 0, res.stderr)
    t.match(res.stdout, 'imported the organization at http://acme.localhost:9991: 4 users, 3 channels, 8 messages, 3 files')
    t.match(res.stderr, 'writing the database rows in one transaction')
    // Imported people have no password and new API keys; the operator hands out new keys.
    const imported = []
    for (const p of people) {
      const key = await target.cli(['user', 'regenerate-api-key', '--org', 'acme', p.deliveryEmail])
      t.equal(key.code, 0, key.stderr)
      imported.push({ deliveryEmail: p.deliveryEmail, apiKey: printed(key.stdout, 'API key') })
    }
    const login = await target.app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', headers: { host: 'acme.localhost' }, payload: { username: people[1]!.deliveryEmail, password: 'anything-at-all' } })
    t.equal(login.statusCode, 401, 'no password works for an imported user')
    const before = await snapshot(t, source.app, people[0]!, people)
    const after = await snapshot(t, target.app, imported[0]!, imported)
    t.same(after, before, 'everything but IDs and secrets is equal')
    // The snapshot holds what the fixture made (so the comparison above compares something).
    const ann = (before.people as Record<string, Record<string, unknown>>)[people[1]!.deliveryEmail]!
    t.equal((ann.messages as unknown[]).length, 6)
    // A channel's creator administers it through an anonymous group, which the round trip keeps.
    t.match(before.streams, [{ name: 'design', settings: { can_administer_channel_group: { members: [people[0]!.deliveryEmail], subgroups: [] } } }])
    t.match(JSON.stringify(ann.messages), `upload:numbers.txt:200:${FIXTURE_UPLOAD.toString('base64')}`)
    t.match((ann.messages as unknown[])[1], { subject: 'logo', flags: ['starred'], reactions: [{ name: 'thumbs_up', user: people[2]!.deliveryEmail }, { name: 'party_parrot', type: 'realm_emoji', code: 'party_parrot' }], edits: [{ user: people[1]!.deliveryEmail }] })
    t.match(ann, { settings: { twenty_four_hour_time: true, emojiset: 'text' }, muted_users: [people[3]!.deliveryEmail], user_topics: [{ stream: 'design', topic: 'colors', policy: 1 }] })
    t.match(before.realm, { realm_description: '<p>We <strong>export</strong> things.</p>', realm_mandatory_topics: true, realm_message_content_edit_limit_seconds: 1200 })
    t.match(before.groups, [
      { name: 'leads', settings: { can_join_group: 'reviewers', can_leave_group: { members: [people[2]!.deliveryEmail], subgroups: ['reviewers'] }, can_manage_group: { members: [people[0]!.deliveryEmail] } } },
      { name: 'reviewers', members: [people[1]!.deliveryEmail, people[2]!.deliveryEmail] },
    ])
    t.match(before.users, [{}, { email: people[2]!.deliveryEmail, avatar: 'uploaded' }])
    t.match(before.emoji, [{ name: 'party_parrot', author: people[0]!.deliveryEmail }])

    const again = await target.cli(['import', archive])
    t.equal(again.code, 1)
    t.match(again.stderr, 'Subdomain already in use')
    const renamed = await target.cli(['import', archive, '--subdomain', 'acme-copy'])
    t.equal(renamed.code, 0, renamed.stderr)
    t.match(renamed.stdout, 'http://acme-copy.localhost:9991')
  })

  t.test('export of an unknown organization names it', async (t) => {
    const res = await source.cli(['export', 'nowhere', '--output', path.join(scratch, 'x.tar.gz')])
    t.equal(res.code, 1)
    t.match(res.stderr, "no organization with the subdomain 'nowhere'")
  })
})
