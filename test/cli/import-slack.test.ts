// `roost import --slack` with a Slack export written here from Slack's
// documented export layout (users.json, channels.json, groups.json,
// mpims.json, dms.json, emoji.json, one JSON file per conversation and day):
// users and roles, public, private and archived channels, threads as topics,
// mrkdwn as Markdown, reactions, custom emoji, a file held in the zip and one
// left as a link, direct and group direct messages; checked through the API.
// Then hostile zips: climbing paths, links, bombs, unknown users.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { zipSync, type Zippable } from 'fflate'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { TINY_GIF } from '../support/multipart.js'
import { printed } from './run.js'
import { liveCli } from './live.js'

t.setTimeout(900_000)

const REPORT = Buffer.from('the quarterly report\n')
const json = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value))

function slackExport(extra: Record<string, unknown[]> = {}): Zippable {
  const general = [
    { type: 'message', subtype: 'channel_join', user: 'U2', text: '<@U2> has joined the channel', ts: '1714557000.000001' },
    { type: 'message', user: 'U1', text: 'Hello <@U2>, see <#C2|random> and <https://example.com|our site> *important* &amp; _soon_', ts: '1714557600.000100' },
    { type: 'message', user: 'U2', text: 'Deploy plan for today', ts: '1714560000.000200', thread_ts: '1714560000.000200', reply_count: 1 },
    {
      type: 'message',
      user: 'U1',
      text: 'Sounds good',
      ts: '1714560100.000300',
      thread_ts: '1714560000.000200',
      reactions: [
        { name: '+1', users: ['U2', 'U3'], count: 2 },
        { name: 'partyblob', users: ['U1'], count: 1 },
        { name: 'clap::skin-tone-2', users: ['U2'], count: 1 },
        { name: 'clap', users: ['U2', 'UGONE'], count: 2 },
      ],
    },
    {
      type: 'message',
      user: 'U2',
      text: 'Two files',
      ts: '1714561000.000400',
      files: [
        { id: 'F1', name: 'report.txt', title: 'Report', mimetype: 'text/plain', url_private: 'https://files.slack.com/files-pri/T1-F1/report.txt' },
        { id: 'F2', name: 'slides.pdf', title: 'Slides', mimetype: 'application/pdf', url_private: 'https://files.slack.com/files-pri/T1-F2/slides.pdf' },
      ],
    },
    { type: 'message', user: 'U1', text: 'Deploy plan for today', ts: '1714562500.000500', thread_ts: '1714562500.000500' },
    ...(extra.general ?? []),
  ]
  return {
    'users.json': json([
      { id: 'U1', name: 'alice', real_name: 'Alice Owner', is_owner: true, is_primary_owner: true, tz: 'Europe/Berlin', profile: { real_name: 'Alice Owner', email: 'alice@slackco.example.com' } },
      { id: 'U2', name: 'bob', real_name: 'Bob Admin', is_admin: true, tz: 'Unknown', profile: { real_name: 'Bob Admin', email: 'bob@slackco.example.com' } },
      { id: 'U3', name: 'cat', real_name: 'Cat Guest', is_restricted: true, profile: { real_name: 'Cat Guest', email: 'cat@slackco.example.com' } },
      { id: 'B1', name: 'deploybot', is_bot: true, profile: { real_name: 'Deploy Bot' } },
    ]),
    'channels.json': json([
      { id: 'C1', name: 'general', created: 1714500000, is_general: true, is_archived: false, members: ['U1', 'U2', 'U3'], purpose: { value: 'Company-wide' }, topic: { value: '' } },
      { id: 'C2', name: 'random', created: 1714500100, is_archived: false, members: ['U1', 'U2'], purpose: { value: '' } },
      { id: 'C3', name: 'old-stuff', created: 1714500200, is_archived: true, members: ['U1'], purpose: { value: 'Gone' } },
    ]),
    'groups.json': json([{ id: 'G1', name: 'secret', created: 1714500300, is_archived: false, members: ['U1', 'U2'], purpose: { value: 'Hush' } }]),
    'mpims.json': json([{ id: 'G2', name: 'mpdm-alice--bob--cat-1', created: 1714500400, members: ['U1', 'U2', 'U3'] }]),
    'dms.json': json([{ id: 'D1', created: 1714500500, members: ['U1', 'U2'] }]),
    'emoji.json': json({ partyblob: 'https://emoji.slack-edge.com/T1/partyblob/abc.gif', notincluded: 'https://emoji.slack-edge.com/T1/notincluded/def.png' }),
    'emoji/partyblob.gif': TINY_GIF,
    '__uploads/F1/report.txt': REPORT,
    'general/2024-05-01.json': json(general),
    'random/2024-05-02.json': json([{ type: 'message', user: 'U2', text: 'random thoughts', ts: '1714650000.000100' }]),
    'secret/2024-05-01.json': json([{ type: 'message', user: 'U1', text: 'hush hush', ts: '1714558000.000100' }]),
    'mpdm-alice--bob--cat-1/2024-05-01.json': json([{ type: 'message', user: 'U3', text: 'group chat', ts: '1714559000.000100' }]),
    'D1/2024-05-01.json': json([{ type: 'message', user: 'U2', text: 'just us', ts: '1714559500.000100' }]),
  }
}

t.test('roost import --slack', async (t) => {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'roost-slack-test-'))
  t.teardown(() => rm(scratch, { recursive: true, force: true }))
  const dataDir = path.join(scratch, 'data')
  const { app, cli } = await liveCli(t, { dataDir })
  t.equal((await cli(['migrate'])).code, 0)
  const write = async (name: string, zip: Zippable | Uint8Array): Promise<string> => {
    const file = path.join(scratch, name)
    await writeFile(file, zip instanceof Uint8Array ? zip : zipSync(zip))
    return file
  }
  const fx = { host: 'slackco.localhost' }
  const keyOf = async (email: string) => ({ deliveryEmail: email, apiKey: printed((await cli(['user', 'regenerate-api-key', '--org', 'slackco', email])).stdout, 'API key') })

  t.test('a Slack export becomes an organization', async (t) => {
    const res = await cli(['import', '--slack', await write('slack.zip', slackExport()), '--subdomain', 'slackco'])
    t.equal(res.code, 0, res.stderr)
    t.match(res.stdout, 'imported the organization at http://slackco.localhost:9991: 4 users, 4 channels, 9 messages, 2 files')
    t.notMatch(res.stdout, '3 files')
    t.match(res.stderr, 'custom emoji :notincluded: skipped')
    t.match(res.stderr, '9 messages (1 notices skipped), 1 files imported, 1 files left as links to Slack')
    const alice = await keyOf('alice@slackco.example.com')
    const bob = await keyOf('bob@slackco.example.com')
    const members = expectSuccess(t, await as(app, alice, fx).get('/users')).members as Record<string, unknown>[]
    t.same(
      members.filter((m) => !String(m.email).startsWith('notification-bot')).map((m) => [m.email, m.full_name, m.role, m.is_bot, m.timezone]),
      [
        ['alice@slackco.example.com', 'Alice Owner', 100, false, 'Europe/Berlin'],
        ['bob@slackco.example.com', 'Bob Admin', 200, false, 'America/New_York'],
        ['cat@slackco.example.com', 'Cat Guest', 600, false, 'America/New_York'],
        ['deploy-bot@localhost', 'Deploy Bot', 400, true, 'America/New_York'],
      ],
    )
    const streams = expectSuccess(t, await as(app, alice, fx).get('/streams', { include_all: true, exclude_archived: false })).streams as Record<string, unknown>[]
    t.match(
      streams.map((s) => [s.name, s.invite_only, s.description, s.is_archived]).sort(),
      [['general', false, 'Company-wide', false], ['old-stuff', false, 'Gone', true], ['random', false, '', false], ['secret', true, 'Hush', false]],
    )
    const register = expectSuccess(t, await as(app, alice, fx).post('/register', { fetch_event_types: ['realm', 'default_streams'] }))
    const nameOf = new Map(streams.map((s) => [s.stream_id, s.name]))
    t.same((register.realm_default_streams as number[]).map((id) => nameOf.get(id)).sort(), ['general', 'random'])
    const general = streams.find((s) => s.name === 'general')!
    t.equal(register.realm_new_stream_announcements_stream_id, general.stream_id, '#general is the announcements channel')

    const messages = expectSuccess(t, await as(app, bob, fx).get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [], apply_markdown: false })).messages as Record<string, unknown>[]
    t.same(
      messages.map((m) => [m.type, m.subject, m.sender_email, m.content]),
      [
        ['stream', 'imported from Slack', 'alice@slackco.example.com', 'Hello @**Bob Admin**, see #**random** and [our site](https://example.com) **important** & *soon*'],
        ['stream', 'imported from Slack', 'alice@slackco.example.com', 'hush hush'],
        ['private', '', 'cat@slackco.example.com', 'group chat'],
        ['private', '', 'bob@slackco.example.com', 'just us'],
        ['stream', '2024-05-01 Deploy plan for today', 'bob@slackco.example.com', 'Deploy plan for today'],
        ['stream', '2024-05-01 Deploy plan for today', 'alice@slackco.example.com', 'Sounds good'],
        ['stream', 'imported from Slack', 'bob@slackco.example.com', (messages[6]?.content as string) ?? ''],
        ['stream', '2024-05-01 Deploy plan for today (2)', 'alice@slackco.example.com', 'Deploy plan for today'],
        ['stream', 'imported from Slack', 'bob@slackco.example.com', 'random thoughts'],
      ],
    )
    t.match(messages[0], { flags: ['mentioned'] })
    t.match(messages[5], {
      reactions: [
        { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji' },
        { emoji_name: '+1', emoji_code: '1f44d' },
        { emoji_name: 'partyblob', reaction_type: 'realm_emoji' },
        { emoji_name: 'clap', emoji_code: '1f44f' },
      ],
    })
    t.equal((messages[5]!.reactions as unknown[]).length, 4, 'skin tones merged, deleted users skipped')
    const fileMessage = messages[6]!.content as string
    t.match(fileMessage, /^Two files\n\[Report\]\(\/user_uploads\/\d+\/[0-9a-f]{2}\/[^/]+\/report\.txt\)\n\[Slides\]\(https:\/\/files\.slack\.com\/files-pri\/T1-F2\/slides\.pdf\)$/)
    const link = /\/user_uploads\/([^)]+)/.exec(fileMessage)![1]
    const download = await app.inject({ method: 'GET', url: `/user_uploads/${link}`, headers: { authorization: `Basic ${Buffer.from(`${bob.deliveryEmail}:${bob.apiKey}`).toString('base64')}`, host: fx.host } })
    t.equal(download.statusCode, 200)
    t.same(download.rawPayload, REPORT)
    t.same(((messages[2]!.display_recipient ?? []) as { email: string }[]).map((r) => r.email).sort(), ['alice@slackco.example.com', 'bob@slackco.example.com', 'cat@slackco.example.com'])
    t.same(((messages[3]!.display_recipient ?? []) as { email: string }[]).map((r) => r.email).sort(), ['alice@slackco.example.com', 'bob@slackco.example.com'])
    const rendered = expectSuccess(t, await as(app, bob, fx).get('/messages', { anchor: 'oldest', num_before: 0, num_after: 1, narrow: [] })).messages as Record<string, unknown>[]
    t.match(rendered[0]!.content, /<span class="user-mention" data-user-id="\d+">@Bob Admin<\/span>/)
    t.match(rendered[0]!.content, /<a href="https:\/\/example.com"[^>]*>our\s+site<\/a>/)
    const emoji = Object.values(expectSuccess(t, await as(app, alice, fx).get('/realm/emoji')).emoji as Record<string, { name: string; source_url: string }>)
    t.same(emoji.map((e) => e.name), ['partyblob'])
    const image = await app.inject({ method: 'GET', url: emoji[0]!.source_url, headers: { host: fx.host } })
    t.same(image.rawPayload, TINY_GIF)
  })

  t.test('names in UTF-8 without the zip flag that says so (as Slack writes them) are read as UTF-8', async (t) => {
    const files = slackExport()
    files['channels.json'] = json([{ id: 'C1', name: 'café', created: 1714500000, members: ['U1'], purpose: { value: '' } }])
    files['café/2024-05-01.json'] = json([{ type: 'message', user: 'U1', text: 'bonjour', ts: '1714557600.000100' }])
    for (const name of Object.keys(files)) if (/^(general|random)\//.test(name)) delete files[name]
    const zip = Buffer.from(zipSync(files))
    // Clear the UTF-8 flag (bit 11) in every local and central header.
    for (let i = 0; i + 4 <= zip.length; i++) {
      const signature = zip.readUInt32LE(i)
      if (signature === 0x04034b50) zip.writeUInt16LE(zip.readUInt16LE(i + 6) & ~0x0800, i + 6)
      if (signature === 0x02014b50) zip.writeUInt16LE(zip.readUInt16LE(i + 8) & ~0x0800, i + 8)
    }
    const res = await cli(['import', '--slack', await write('utf8.zip', zip), '--subdomain', 'cafe-co'])
    t.equal(res.code, 0, res.stderr)
    const alice = { deliveryEmail: 'alice@slackco.example.com', apiKey: printed((await cli(['user', 'regenerate-api-key', '--org', 'cafe-co', 'alice@slackco.example.com'])).stdout, 'API key') }
    const messages = expectSuccess(t, await as(app, alice, { host: 'cafe-co.localhost' }).get('/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'channel', operand: 'café' }], apply_markdown: false })).messages as Record<string, unknown>[]
    t.same(messages.map((m) => [m.display_recipient, m.content]), [['café', 'bonjour']])
  })

  t.test('bad Slack exports are refused by name, with nothing imported', async (t) => {
    const zeros = new Uint8Array(3 * 1024 * 1024)
    const cases: [string, Zippable | Uint8Array, string[], RegExp][] = [
      ['not a zip', Buffer.from('plain text, not a zip'), [], /not a readable \.zip/],
      ['truncated', zipSync(slackExport()).subarray(0, 400), [], /not a readable \.zip|corrupt or truncated/],
      ['climbing path', { ...slackExport(), '../evil.json': json([]) }, [], /climbs out of it/],
      ['absolute path', { ...slackExport(), '/tmp/evil.json': json([]) }, [], /climbs out of it|absolute path/],
      ['symbolic link', { ...slackExport(), 'link.json': [Buffer.from('/etc/passwd'), { os: 3, attrs: (0o120777 << 16) >>> 0 }] }, [], /not a regular file: "link\.json"/],
      ['zip bomb', { ...slackExport(), 'zeros.bin': [zeros, { level: 9 }] }, ['--max-size', '1'], /holds more than 1048576 bytes uncompressed/],
      ['too many entries', { ...slackExport(), ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`x/${i}.json`, json([])])) }, ['--max-entries', '20'], /more than 20 entries/],
      ['no channels.json', { 'users.json': json([]) }, [], /has no channels\.json: it is not a Slack export/],
      ['message from an unknown user', slackExport({ general: [{ type: 'message', user: 'U404', text: 'who am I', ts: '1714562000.000100' }] }), [], /general\/2024-05-01\.json, message ts 1714562000\.000100: U404 is not a user in users\.json/],
      ['member unknown', { ...slackExport(), 'groups.json': json([{ id: 'G9', name: 'ghosts', members: ['U1', 'U77'], purpose: { value: '' } }]) }, [], /groups\.json, channel 'ghosts': U77 is not a user in users\.json/],
      ['user without an address', { ...slackExport(), 'users.json': json([{ id: 'U1', name: 'alice', profile: { real_name: 'Alice' } }]) }, [], /the user U1 \(Alice\) has no email address/],
      ['oversized JSON', slackExport({ general: [{ type: 'message', user: 'U1', text: 'x'.repeat(2 * 1024 * 1024), ts: '1714563000.000100' }] }), ['--max-json-size', '1'], /general\/2024-05-01\.json is larger than 1048576 bytes/],
    ]
    for (const [name, zip, args, message] of cases) {
      const res = await cli(['import', '--slack', await write(`${name.replace(/ /g, '-')}.zip`, zip), '--subdomain', 'badco', ...args])
      t.equal(res.code, 1, `${name}: exit code 1 (${res.stderr.trim()})`)
      t.match(res.stderr, /^roost: import refused, nothing was imported: /m, name)
      t.match(res.stderr, message, name)
    }
    const list = await cli(['org', 'list'])
    t.same(list.stdout.trim().split('\n').slice(1).map((l) => l.split('\t')[0]), ['cafe-co', 'slackco'], 'no organization was created')
    const noSubdomain = await cli(['import', '--slack', path.join(scratch, 'slack.zip')])
    t.equal(noSubdomain.code, 1)
    t.match(noSubdomain.stderr, '--slack needs --subdomain <subdomain>')
  })
})
