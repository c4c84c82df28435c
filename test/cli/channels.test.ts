// `roost channel list | create | archive | add-members` on PostgreSQL and
// Redis next to a running app (test/cli/live.ts): output, exit codes, and
// the events and state the app's clients see.
import t from 'tap'
import pg from 'pg'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { checkStateAfter } from '../support/state-check.js'
import { liveCli } from './live.js'
import { printed } from './run.js'
import { eventually } from '../support/eventually.js'

t.setTimeout(900_000)

interface Listed {
  stream_id: number
  name: string
  privacy: string
  subscribers: number
  description: string
}

t.test('roost channel commands', async (t) => {
  const { app, cli, org, env } = await liveCli(t)
  const owner = await org('acme', 'Acme')
  await org('bravo', 'Bravo')
  const created = await cli(['user', 'create', '--org', 'acme', '--email', 'mo@acme.example.com', '--name', 'Mo Member'])
  const mo = { id: Number(/user ID (\d+)/.exec(created.stdout)?.[1]), deliveryEmail: 'mo@acme.example.com', apiKey: printed(created.stdout, 'API key') }
  const list = async (subdomain = 'acme'): Promise<Listed[]> => {
    const res = await cli(['channel', 'list', subdomain, '--json'])
    t.equal(res.code, 0, res.stderr)
    return JSON.parse(res.stdout) as Listed[]
  }
  let run = { code: 0 as number | null, stdout: '', stderr: '' }

  t.test('create makes a channel without subscribers; everyone who may see it hears of it', async (t) => {
    const events = await checkStateAfter(t, app, mo, async () => (run = await cli(['channel', 'create', 'acme', 'design', '--description', 'Shapes and colours'])), {
      expectTypes: ['stream/create'],
    })
    t.equal(run.code, 0, run.stderr)
    t.match(run.stdout, /^created the public channel 'design' \(channel ID \d+\) in 'Acme'\n$/)
    t.match(events, [{ type: 'stream', op: 'create', streams: [{ name: 'design', description: 'Shapes and colours', invite_only: false }] }])
    // A private channel: only administrators hear of it.
    const secret = await checkStateAfter(t, app, owner, async () => (run = await cli(['channel', 'create', 'acme', 'secret', '--private'])), { expectTypes: ['stream/create'] })
    t.equal(run.code, 0, run.stderr)
    t.match(secret, [{ type: 'stream', op: 'create', streams: [{ name: 'secret', invite_only: true }] }])
    const streams = expectSuccess(t, await as(app, mo).get('/streams')).streams as { name: string }[]
    t.notOk(streams.some((s) => s.name === 'secret'), 'a member does not see the private channel')
  })

  t.test('create refuses a taken or bad name, and names what is missing', async (t) => {
    const [taken, otherCase, long, missing, noOrg] = await Promise.all([
      cli(['channel', 'create', 'acme', 'design']),
      cli(['channel', 'create', 'acme', 'DESIGN']),
      cli(['channel', 'create', 'acme', 'x'.repeat(61)]),
      cli(['channel', 'create', 'acme']),
      cli(['channel', 'create', 'nowhere', 'design']),
    ])
    for (const res of [taken, otherCase]) {
      t.equal(res.code, 1)
      t.equal(res.stderr, 'roost: Channel name already in use.\n')
    }
    t.equal(long.code, 1)
    t.equal(long.stderr, 'roost: Channel name too long (limit: 60 characters).\n')
    t.equal(missing.code, 2)
    t.match(missing.stderr, "error: missing required argument 'name'")
    t.equal(noOrg.code, 1)
    t.match(noOrg.stderr, "no organization with the subdomain 'nowhere'")
  })

  t.test('list shows the channels that are not archived', async (t) => {
    const channels = await list()
    t.same(
      channels.map((c) => [c.name, c.privacy, c.subscribers, c.description]),
      [
        ['design', 'public', 0, 'Shapes and colours'],
        ['general', 'public', 2, 'Everyone is added to this channel by default.'],
        ['secret', 'private', 0, ''],
      ],
    )
    const table = await cli(['channel', 'list', 'acme'])
    const lines = table.stdout.trimEnd().split('\n')
    t.match(lines[0], /^ID\s+NAME\s+PRIVACY\s+SUBSCRIBERS\s+DESCRIPTION$/)
    t.match(lines[1], /^\d+\s+design\s+public\s+0\s+Shapes and colours$/)
    t.notOk((await list('bravo')).some((c) => c.name === 'design'), 'nothing crosses organizations')
  })

  t.test('add-members subscribes people in one request, as the API does', async (t) => {
    const events = await checkStateAfter(t, app, mo, async () => (run = await cli(['channel', 'add-members', 'acme', 'Design', 'MO@acme.example.com', owner.deliveryEmail])), {
      expectTypes: ['subscription/add', 'subscription/peer_add'],
    })
    t.equal(run.code, 0, run.stderr)
    t.equal(run.stdout, "added 2 people to 'design'\n")
    t.match(events.filter((e) => e.type === 'subscription'), [{ op: 'add', subscriptions: [{ name: 'design' }] }, { op: 'peer_add' }])
    const again = await cli(['channel', 'add-members', 'acme', 'design', mo.deliveryEmail])
    t.equal(again.stdout, "added 0 people to 'design' (1 already subscribed)\n")
    t.equal((await list()).find((c) => c.name === 'design')?.subscribers, 2)
  })

  t.test('add-members refuses unknown people, too many addresses, unknown and private channels', async (t) => {
    const many = Array.from({ length: 1001 }, (_, i) => `p${i}@acme.example.com`)
    const [unknown, tooMany, noChannel, other, none] = await Promise.all([
      cli(['channel', 'add-members', 'acme', 'design', 'ghost@acme.example.com', mo.deliveryEmail, 'boss@bravo.example.com']),
      cli(['channel', 'add-members', 'acme', 'design', ...many]),
      cli(['channel', 'add-members', 'acme', 'desi%', mo.deliveryEmail]),
      cli(['channel', 'add-members', 'bravo', 'design', 'boss@bravo.example.com']),
      cli(['channel', 'add-members', 'acme', 'design']),
    ])
    t.equal(unknown.code, 1)
    t.equal(unknown.stderr, "roost: no user with the email 'ghost@acme.example.com', 'boss@bravo.example.com' in the organization 'Acme'\n")
    t.equal(tooMany.code, 1)
    t.equal(tooMany.stderr, 'roost: too many email addresses: 1001 (at most 1000 per call)\n')
    t.equal(noChannel.code, 1)
    t.equal(noChannel.stderr, "roost: no channel named 'desi%' in the organization 'Acme' (see 'roost channel list')\n")
    t.equal(other.code, 1)
    t.equal(none.code, 2)
    t.match(none.stderr, "error: missing required argument 'email'")
    t.equal((await list()).find((c) => c.name === 'design')?.subscribers, 2, 'nothing was added')
  })

  t.test('add-members adds people to a private channel no one is subscribed to, with the events a subscription sends', async (t) => {
    // A member who could not see the channel hears of it (stream create) before the subscription.
    const events = await checkStateAfter(t, app, mo, async () => (run = await cli(['channel', 'add-members', 'acme', 'secret', mo.deliveryEmail])), {
      expectTypes: ['stream/create', 'subscription/add'],
    })
    t.equal(run.code, 0, run.stderr)
    t.equal(run.stdout, "added 1 person to 'secret'\n")
    t.match(
      events.filter((e) => e.type === 'stream' || e.type === 'subscription'),
      [
        { type: 'stream', op: 'create', streams: [{ name: 'secret', invite_only: true }] },
        { type: 'subscription', op: 'add', subscriptions: [{ name: 'secret', invite_only: true, subscribers: [mo.id] }] },
      ],
    )
    // An owner already sees the channel: a subscription, and peer_add reaches the earlier subscriber.
    const peers = await checkStateAfter(t, app, mo, async () => (run = await cli(['channel', 'add-members', 'acme', 'secret', owner.deliveryEmail])), {
      expectTypes: ['subscription/peer_add'],
    })
    t.equal(run.code, 0, run.stderr)
    t.match(peers.filter((e) => e.type === 'subscription'), [{ op: 'peer_add', user_ids: [owner.id] }])
    const subs = expectSuccess(t, await as(app, mo).get('/users/me/subscriptions')).subscriptions as { name: string }[]
    t.ok(subs.some((s) => s.name === 'secret'), 'the member is subscribed')
    // The Notification Bot tells the member who was added, as after a subscription by someone else.
    const dms = expectSuccess(t, await as(app, mo).get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }] })).messages as { content: string }[]
    t.match(dms.at(-1)?.content, /subscribed you to .*secret/)
    t.equal((await list()).find((c) => c.name === 'secret')?.subscribers, 2)
  })

  t.test('add-members acts on the channel it found, by ID: a rename committed meanwhile neither misdirects nor creates a channel', async (t) => {
    const design = (await list()).find((c) => c.name === 'design') as Listed
    const bob = await cli(['user', 'create', '--org', 'acme', '--email', 'bob@acme.example.com', '--name', 'Bob'])
    t.equal(bob.code, 0, bob.stderr)
    // A rename in an open transaction holds the channel's row: add-members finds 'design' by name, then waits for it.
    const [renamer, watcher] = [new pg.Client({ connectionString: env.DATABASE_URL }), new pg.Client({ connectionString: env.DATABASE_URL })]
    await Promise.all([renamer.connect(), watcher.connect()])
    t.teardown(() => Promise.all([renamer.end(), watcher.end()]))
    await renamer.query('BEGIN')
    await renamer.query("UPDATE stream SET name = 'drafting' WHERE id = $1", [design.stream_id])
    let finished: string | undefined
    const adding = cli(['channel', 'add-members', 'acme', 'design', 'bob@acme.example.com']).then((res) => ((finished = `exited with ${res.code}: ${res.stdout}${res.stderr}`), res))
    // (Watched from a connection of its own: inside the renamer's transaction pg_stat_activity would stay one snapshot.)
    await eventually(
      'add-members waits for the channel row',
      async () => {
        const { rows } = await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
        return (rows[0] as { n: number }).n > 0
      },
      { timeoutMs: 60_000, intervalMs: 50, giveUp: () => finished },
    )
    await renamer.query('COMMIT')
    const added = await adding
    t.equal(added.code, 0, added.stderr)
    t.equal(added.stdout, "added 1 person to 'drafting'\n", 'the people went to the channel found, under its new name')
    const after = await list()
    t.same(after.filter((c) => c.name === 'design'), [], 'no channel named design was created')
    t.equal(after.find((c) => c.stream_id === design.stream_id)?.subscribers, 3)
    await renamer.query("UPDATE stream SET name = 'design' WHERE id = $1", [design.stream_id])
  })

  t.test('archive keeps the name and the subscribers; the channel takes no more messages', async (t) => {
    const events = await checkStateAfter(t, app, mo, async () => (run = await cli(['channel', 'archive', 'acme', 'design'])), {
      expectTypes: ['stream/update'],
      expectLegacyTypes: ['stream/delete'],
    })
    t.equal(run.code, 0, run.stderr)
    t.match(run.stdout, /^archived the channel 'design' \(channel ID \d+\)\n$/)
    t.match(events.filter((e) => e.type === 'stream'), [{ op: 'update', name: 'design', property: 'is_archived', value: true }])
    t.same((await list()).map((c) => c.name), ['general', 'secret'])
    const again = await cli(['channel', 'archive', 'acme', 'design'])
    t.equal(again.code, 1)
    t.equal(again.stderr, "roost: no channel named 'design' in the organization 'Acme' (see 'roost channel list')\n")
    const taken = await cli(['channel', 'create', 'acme', 'design'])
    t.equal(taken.code, 1, 'an archived channel keeps its name')
  })
})
