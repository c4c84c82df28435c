// `roost import` of archives made here: a small export in upstream's format
// (written from upstream's export.py layout: an integer `sending_client`
// naming a zerver_client row, `subject`, recipients of all three types,
// `flags_mask`, no system groups, uploads with records), checked through the
// API; and every kind of bad archive, each refused with a message naming the
// problem, no organization created and no file left in storage.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import t from 'tap'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { printed } from './run.js'
import { liveCli } from './live.js'

t.setTimeout(900_000)

interface TarEntry {
  name: string
  /** '0' file, '2' symbolic link, '1' hard link, '5' directory. */
  type?: string
  data?: Buffer | string
  link?: string
}

/** A tar stream written byte by byte (ustar headers), so entries node-tar would refuse to create can be made. */
function rawTar(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = []
  for (const e of entries) {
    const data = Buffer.from(e.data ?? '')
    const header = Buffer.alloc(512)
    header.write(e.name, 0, 100, 'utf8')
    header.write('0000644\0', 100)
    header.write('0000000\0', 108)
    header.write('0000000\0', 116)
    header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124)
    header.write('00000000000\0', 136)
    header.write('        ', 148)
    header.write(e.type ?? '0', 156)
    if (e.link) header.write(e.link, 157, 100, 'utf8')
    header.write('ustar\0', 257)
    header.write('00', 263)
    let sum = 0
    for (const byte of header) sum += byte
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148)
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512))
  }
  blocks.push(Buffer.alloc(1024))
  return gzipSync(Buffer.concat(blocks))
}

const UPLOAD = Buffer.from('minutes of the meeting\n')

/** An export as upstream's export.py writes it: IDs of its own, cross-realm bots, clients by ID. */
function upstreamExport(overrides: { messages?: Record<string, unknown>[]; dropTable?: string; realm?: Record<string, unknown>; owner?: Record<string, unknown> } = {}): Record<string, unknown> {
  const realm = {
    zerver_realm: [{ id: 7, string_id: 'upco', name: 'Upstream Co', description: 'Imported from **upstream**', date_created: 1700000000.5, deactivated: false, mandatory_topics: false, default_language: 'en', waiting_period_threshold: 3, some_future_setting: 'ignored', ...overrides.realm }],
    zerver_userprofile: [
      { id: 101, realm: 7, email: 'iris@upco.example.com', delivery_email: 'iris@upco.example.com', full_name: 'Iris Owner', role: 100, is_active: true, is_bot: false, bot_type: null, bot_owner: null, date_joined: 1700000100, timezone: 'Europe/Paris', avatar_source: 'G', is_mirror_dummy: false, twenty_four_hour_time: true, password: 'argon2$upstream-hash', api_key: 'upstreamkey', ...overrides.owner },
      { id: 102, realm: 7, email: 'jon@upco.example.com', delivery_email: 'jon@upco.example.com', full_name: 'Jon Member', role: 400, is_active: true, is_bot: false, date_joined: 1700000200, timezone: '', avatar_source: 'G', is_mirror_dummy: false },
      { id: 103, realm: 7, email: 'kim@upco.example.com', delivery_email: 'kim@upco.example.com', full_name: 'Kim Member', role: 400, is_active: true, is_bot: false, is_billing_admin: true, date_joined: 1700000300, timezone: '', avatar_source: 'G', is_mirror_dummy: false },
    ],
    zerver_userprofile_crossrealm: [{ id: 1, email: 'notification-bot@zulip.com' }],
    zerver_userprofile_mirrordummy: [],
    zerver_stream: [{ id: 20, realm: 7, name: 'town square', description: 'Everything', invite_only: false, history_public_to_subscribers: true, date_created: 1700000050, recipient: 30, deactivated: false }],
    zerver_defaultstream: [{ id: 1, realm: 7, stream: 20 }],
    zerver_recipient: [
      { id: 30, type: 2, type_id: 20 },
      { id: 31, type: 1, type_id: 101 },
      { id: 32, type: 1, type_id: 102 },
      { id: 33, type: 1, type_id: 103 },
      { id: 34, type: 3, type_id: 5 },
    ],
    zerver_huddle: [{ id: 5, huddle_hash: 'x', recipient: 34, group_size: 3 }],
    zerver_subscription: [
      { id: 1, user_profile: 101, recipient: 30, active: true, color: '#76ce90', is_muted: false, pin_to_top: false },
      { id: 2, user_profile: 102, recipient: 30, active: true, color: '#fae589', is_muted: true, pin_to_top: false },
      { id: 3, user_profile: 101, recipient: 31, active: true, color: '#c2c2c2' },
      { id: 4, user_profile: 101, recipient: 34, active: true, color: '#c2c2c2' },
      { id: 5, user_profile: 102, recipient: 34, active: true, color: '#c2c2c2' },
      { id: 6, user_profile: 103, recipient: 34, active: true, color: '#c2c2c2' },
    ],
    zerver_client: [{ id: 3, name: 'ZulipMobile' }],
    zerver_reaction: [{ id: 1, user_profile: 102, message: 501, emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji' }],
    zerver_realmauditlog: [{ id: 1, event_type: 101 }],
  } as Record<string, unknown>
  if (overrides.dropTable) delete realm[overrides.dropTable]
  const messages = overrides.messages ?? [
    { id: 501, realm: 7, sender: 101, recipient: 30, subject: 'welcome', content: 'Hello [minutes](/user_uploads/7/ab/oldtoken/minutes.txt)', rendered_content: '<p>Hello <a href="/user_uploads/7/ab/oldtoken/minutes.txt">minutes</a></p>', date_sent: 1700001000, last_edit_time: null, edit_history: null, sending_client: 3, has_attachment: true },
    { id: 502, realm: 7, sender: 102, recipient: 31, subject: '', content: 'a direct message', rendered_content: '<p>a direct message</p>', date_sent: 1700002000, sending_client: 3 },
    { id: 503, realm: 7, sender: 103, recipient: 34, subject: '', content: 'a group message', rendered_content: '<p>a group message</p>', date_sent: 1700003000, sending_client: 3 },
    { id: 504, realm: 7, sender: 1, recipient: 30, subject: 'welcome', content: 'from the bot', rendered_content: '<p>from the bot</p>', date_sent: 1700004000, sending_client: 3 },
  ]
  return {
    'realm.json': realm,
    'messages-000001.json': {
      zerver_message: messages,
      zerver_usermessage: [
        { id: 1, user_profile: 101, message: 501, flags_mask: 1 },
        { id: 2, user_profile: 102, message: 501, flags_mask: 2 },
        { id: 3, user_profile: 101, message: 502, flags_mask: 0 },
        { id: 4, user_profile: 102, message: 502, flags_mask: 1 },
        { id: 5, user_profile: 101, message: 503, flags_mask: 0 },
        { id: 6, user_profile: 102, message: 503, flags_mask: 0 },
        { id: 7, user_profile: 103, message: 503, flags_mask: 1 },
        { id: 8, user_profile: 101, message: 504, flags_mask: 0 },
        { id: 9, user_profile: 102, message: 504, flags_mask: 0 },
      ],
    },
    'attachment.json': { zerver_attachment: [{ id: 9, realm: 7, owner: 101, file_name: 'minutes.txt', path_id: '7/ab/oldtoken/minutes.txt', size: UPLOAD.length, create_time: 1700000999, messages: [501], scheduled_messages: [], is_realm_public: true }] },
    'uploads/records.json': [{ realm_id: 7, user_profile_id: 101, s3_path: '7/ab/oldtoken/minutes.txt', path: '7/ab/oldtoken/minutes.txt', size: UPLOAD.length }],
    'avatars/records.json': [],
    'emoji/records.json': [],
  }
}

function exportArchive(files: Record<string, unknown>, top = 'zulip-export-abc'): Buffer {
  const entries: TarEntry[] = [{ name: `${top}/`, type: '5' }]
  for (const [name, value] of Object.entries(files)) entries.push({ name: `${top}/${name}`, data: JSON.stringify(value) })
  entries.push({ name: `${top}/uploads/7/ab/oldtoken/minutes.txt`, data: UPLOAD })
  return rawTar(entries)
}

t.test('roost import', async (t) => {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'roost-import-test-'))
  t.teardown(() => rm(scratch, { recursive: true, force: true }))
  const dataDir = path.join(scratch, 'data')
  const { app, cli } = await liveCli(t, { dataDir })
  t.equal((await cli(['migrate'])).code, 0)
  const write = async (name: string, data: Buffer): Promise<string> => {
    const file = path.join(scratch, name)
    await writeFile(file, data)
    return file
  }
  const storedFiles = async (): Promise<string[]> => {
    const found: string[] = []
    const walk = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        if (e.isDirectory()) await walk(path.join(dir, e.name))
        else found.push(path.join(dir, e.name))
      }
    }
    await walk(path.join(dataDir, 'uploads'))
    return found
  }

  t.test('an export in upstream’s format becomes an organization', async (t) => {
    // Zoom (3), a call provider Roost lacks, arrives as none.
    const file = await write('upstream.tar.gz', exportArchive(upstreamExport({ realm: { video_chat_provider: 3 } })))
    const res = await cli(['import', file])
    t.equal(res.code, 0, res.stderr)
    t.match(res.stdout, 'imported the organization at http://upco.localhost:9991: 3 users, 1 channels, 4 messages, 1 files')
    t.match(res.stdout, "give them one with 'roost user reset-password --org upco <email>'")
    const key = printed((await cli(['user', 'regenerate-api-key', '--org', 'upco', 'iris@upco.example.com'])).stdout, 'API key')
    const iris = { deliveryEmail: 'iris@upco.example.com', apiKey: key }
    const fx = { host: 'upco.localhost' }
    const members = expectSuccess(t, await as(app, iris, fx).get('/users')).members as Record<string, unknown>[]
    t.match(
      members.filter((m) => !m.is_bot).map((m) => [m.email, m.full_name, m.role, m.timezone, m.date_joined]),
      [
        ['iris@upco.example.com', 'Iris Owner', 100, 'Europe/Paris', /^2023-11-14T22:15:00/],
        ['jon@upco.example.com', 'Jon Member', 400, '', /^2023-11-14/],
        ['kim@upco.example.com', 'Kim Member', 400, '', /^2023-11-14/],
      ],
    )
    // An export older than level 363: its billing admin (with the owners, who had billing access) keeps billing access, as upstream's migration gave it.
    t.same(members.filter((m) => !m.is_bot).map((m) => [m.email, m.is_billing_admin]), [
      ['iris@upco.example.com', true],
      ['jon@upco.example.com', false],
      ['kim@upco.example.com', true],
    ])
    const billing = expectSuccess(t, await as(app, iris, fx).post('/register', { fetch_event_types: ['realm', 'realm_user_groups'] }))
    const ownersGroup = (billing.realm_user_groups as { id: number; name: string }[]).find((g) => g.name === 'role:owners')?.id
    const kim = members.find((m) => m.email === 'kim@upco.example.com')?.user_id
    t.same(billing.realm_can_manage_billing_group, { direct_members: [kim], direct_subgroups: [ownersGroup] })
    const settings = expectSuccess(t, await as(app, iris, fx).post('/register', { fetch_event_types: ['user_settings', 'realm'] }))
    t.match(settings, { user_settings: { twenty_four_hour_time: true }, realm_name: 'Upstream Co', realm_waiting_period_threshold: 3, realm_video_chat_provider: 0 })
    const messages = expectSuccess(t, await as(app, iris, fx).get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [] })).messages as Record<string, unknown>[]
    t.same(messages.map((m) => [m.type, m.subject, m.sender_email, m.client, m.timestamp]), [
      ['stream', 'welcome', 'iris@upco.example.com', 'ZulipMobile', 1700001000],
      ['private', '', 'jon@upco.example.com', 'ZulipMobile', 1700002000],
      ['private', '', 'kim@upco.example.com', 'ZulipMobile', 1700003000],
      ['stream', 'welcome', 'notification-bot@upco.localhost.invalid', 'ZulipMobile', 1700004000],
    ])
    t.match(messages[0], { flags: ['read'], reactions: [{ emoji_name: 'tada', emoji_code: '1f389' }] })
    t.same(((messages[2]!.display_recipient ?? []) as { email: string }[]).map((r) => r.email).sort(), ['iris@upco.example.com', 'jon@upco.example.com', 'kim@upco.example.com'])
    const link = /href="\/user_uploads\/([^"]+)"/.exec(messages[0]!.content as string)?.[1] ?? ''
    t.match(link, /^\d+\/[0-9a-f]{2}\/[^/]+\/minutes\.txt$/)
    t.not(link, '7/ab/oldtoken/minutes.txt', 'the upload has a new path')
    const download = await app.inject({ method: 'GET', url: `/user_uploads/${link}`, headers: { authorization: `Basic ${Buffer.from(`${iris.deliveryEmail}:${iris.apiKey}`).toString('base64')}`, host: fx.host } })
    t.equal(download.statusCode, 200)
    t.same(download.rawPayload, UPLOAD)
    const jonKey = printed((await cli(['user', 'regenerate-api-key', '--org', 'upco', 'jon@upco.example.com'])).stdout, 'API key')
    const jonView = expectSuccess(t, await as(app, { deliveryEmail: 'jon@upco.example.com', apiKey: jonKey }, fx).get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [] })).messages as Record<string, unknown>[]
    t.match(jonView[0], { flags: ['starred'] })
    const subs = expectSuccess(t, await as(app, { deliveryEmail: 'jon@upco.example.com', apiKey: jonKey }, fx).get('/users/me/subscriptions')).subscriptions as Record<string, unknown>[]
    t.match(subs, [{ name: 'town square', is_muted: true, color: '#fae589' }])
    const groups = expectSuccess(t, await as(app, iris, fx).get('/user_groups')).user_groups as { name: string; members: number[] }[]
    t.equal(groups.find((g) => g.name === 'role:owners')?.members.length, 1, 'system groups are made, with each person in their role group')
    const login = await app.inject({ method: 'POST', url: '/api/v1/fetch_api_key', headers: { host: fx.host }, payload: { username: 'iris@upco.example.com', password: 'argon2$upstream-hash' } })
    t.equal(login.statusCode, 401, 'no password from the export works')
    const old = await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { host: fx.host, authorization: `Basic ${Buffer.from('iris@upco.example.com:upstreamkey').toString('base64')}` } })
    t.equal(old.statusCode, 401, 'no API key from the export works')
  })

  t.test('bad archives are refused by name, with nothing imported or stored', async (t) => {
    const before = await storedFiles()
    const good = upstreamExport()
    const zeros = Buffer.alloc(3 * 1024 * 1024)
    const cases: [string, Buffer, string[], RegExp][] = [
      ['not an archive', Buffer.from('this is not a tarball at all, just text'), [], /the archive is corrupt or truncated/],
      ['truncated', exportArchive(good).subarray(0, 300), [], /the archive is corrupt or truncated/],
      ['path climbing out', rawTar([{ name: 'x/realm.json', data: '{}' }, { name: 'x/../../evil.txt', data: 'gotcha' }]), [], /climbs out of it \('\.\.'\): "x\/\.\.\/\.\.\/evil\.txt"/],
      ['absolute path', rawTar([{ name: '/etc/roost-evil', data: 'gotcha' }]), [], /an absolute path: "\/etc\/roost-evil"/],
      ['symbolic link', rawTar([{ name: 'x/realm.json', type: '2', link: '/etc/passwd' }]), [], /not a regular file \(SymbolicLink\): "x\/realm.json"/],
      ['hard link', rawTar([{ name: 'x/realm.json', type: '1', link: '/etc/passwd' }]), [], /not a regular file \(Link\)/],
      ['zip bomb', rawTar([{ name: 'x/zeros', data: zeros }]), ['--max-size', '1'], /holds more than 1048576 bytes uncompressed/],
      ['too many entries', rawTar(Array.from({ length: 30 }, (_, i) => ({ name: `x/f${i}`, data: 'a' }))), ['--max-entries', '10'], /more than 10 entries/],
      ['oversized JSON', exportArchive({ ...good, 'realm.json': { ...(good['realm.json'] as object), padding: [[' '.repeat(2 * 1024 * 1024)]] } }), ['--max-json-size', '1'], /realm\.json is larger than 1048576 bytes/],
      ['malformed JSON', rawTar([{ name: 'x/realm.json', data: '{"zerver_realm": [' }]), [], /realm\.json is not valid JSON/],
      ['not an export', rawTar([{ name: 'x/hello.txt', data: 'hi' }]), [], /has no realm\.json/],
      ['missing table', exportArchive(upstreamExport({ dropTable: 'zerver_stream' })), [], /realm\.json has no zerver_stream table/],
      [
        'unknown sender',
        exportArchive(upstreamExport({ messages: [{ id: 601, sender: 999, recipient: 30, subject: 'x', content: 'x', rendered_content: '<p>x</p>', date_sent: 1 }] })),
        ['--subdomain', 'upco-two'],
        /zerver_message row id 601: 'sender' is 999, which is no user of the export/,
      ],
      [
        'topic too long',
        exportArchive(upstreamExport({ messages: [{ id: 603, sender: 101, recipient: 30, subject: 't'.repeat(61), content: 'x', rendered_content: '<p>x</p>', date_sent: 1 }] })),
        ['--subdomain', 'upco-four'],
        /zerver_message row id 603: 'subject' is longer than 60 characters/,
      ],
      [
        'unknown channel',
        exportArchive(upstreamExport({ messages: [{ id: 602, sender: 101, recipient: 99, subject: 'x', content: 'x', rendered_content: '<p>x</p>', date_sent: 1 }] })),
        ['--subdomain', 'upco-three'],
        /zerver_message row id 602: 'recipient' 99 is no recipient of the export/,
      ],
      // Settings the API would refuse: the import refuses them too, naming the setting.
      ...(
        [
          ['unknown video call provider', { realm: { video_chat_provider: 99 } }, /zerver_realm: the setting 'video_chat_provider' has a value Roost refuses, 99: Invalid video_chat_provider 99/],
          ['unknown weekday', { realm: { digest_weekday: 9 } }, /zerver_realm: the setting 'digest_weekday' has a value Roost refuses, 9: Invalid digest_weekday/],
          ['unknown language', { realm: { default_language: 'xx-nowhere' } }, /zerver_realm: the setting 'default_language' has a value Roost refuses, "xx-nowhere": Invalid language 'xx-nowhere'/],
          ['no retention', { realm: { message_retention_days: 0 } }, /zerver_realm: the setting 'message_retention_days' has a value Roost refuses, 0:/],
          ['negative waiting period', { realm: { waiting_period_threshold: -3 } }, /zerver_realm: the setting 'waiting_period_threshold' has a value Roost refuses, -3:/],
          ['unknown edit history policy', { realm: { message_edit_history_visibility_policy: 7 } }, /zerver_realm: the setting 'message_edit_history_visibility_policy' has a value Roost refuses, 7: Bad value for 'message_edit_history_visibility_policy': 7/],
          ['unknown address visibility', { realm: { email_address_visibility: 9 } }, /zerver_realm: the setting 'email_address_visibility' has a value Roost refuses, 9: expected one of 1 to 5/],
          ['public moderation channel', { realm: { moderation_request_channel: 20 } }, /zerver_realm: the setting 'moderation_request_channel' names the channel 20, which is not private/],
          ['unknown emoji set', { owner: { emojiset: 'apple' } }, /zerver_userprofile row id 101: the setting 'emojiset' has a value Roost refuses, "apple": Invalid emojiset/],
          ['unknown user language', { owner: { default_language: 'klingon' } }, /zerver_userprofile row id 101: the setting 'default_language' has a value Roost refuses, "klingon": Invalid default_language/],
        ] as [string, { realm?: Record<string, unknown>; owner?: Record<string, unknown> }, RegExp][]
      ).map(([name, change, message], i): [string, Buffer, string[], RegExp] => [name, exportArchive(upstreamExport(change)), ['--subdomain', `upco-setting-${i}`], message]),
    ]
    for (const [name, data, args, message] of cases) {
      const file = await write(`${name.replace(/ /g, '-')}.tar.gz`, data)
      const res = await cli(['import', file, ...args])
      t.equal(res.code, 1, `${name}: exit code 1 (${res.stderr.trim()})`)
      t.match(res.stderr, /^roost: import refused, nothing was imported: /m, name)
      t.match(res.stderr, message, name)
    }
    const list = await cli(['org', 'list'])
    t.same(list.stdout.trim().split('\n').slice(1).map((l) => l.split('\t')[0]), ['upco'], 'no organization was created')
    t.same(await storedFiles(), before, 'the uploads written before a refusal were deleted again')
    t.equal((await readdir(scratch)).includes('evil.txt'), false)
    const missing = await cli(['import', path.join(scratch, 'no-such-file.tar.gz')])
    t.equal(missing.code, 1)
    t.match(missing.stderr, 'no such file')
    const badLimit = await cli(['import', 'x.tar.gz', '--max-size', 'lots'])
    t.equal(badLimit.code, 2)
    t.match(badLimit.stderr, "option '--max-size <MiB>' argument 'lots' is invalid")
  })
})
