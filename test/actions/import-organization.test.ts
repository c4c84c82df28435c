// The import writes set-based: the database statements it runs do not grow
// with the number of people, channels, messages, reactions or flags
// (support/statements.ts counts them at the driver). Two Slack exports made
// here, one ten times the other, import with the same statements.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { countStatements, countingDatabase } from '../support/statements.js'
import { importOrganization } from '../../src/actions/import-organization.js'
import { slackToBundle } from '../../src/import/slack.js'

function slackFiles(people: number, messagesPerDay: number): Map<string, Buffer> {
  const ids = Array.from({ length: people }, (_, i) => `U${i}`)
  const json = (v: unknown) => Buffer.from(JSON.stringify(v))
  const days = ['2024-05-01', '2024-05-02']
  const files = new Map<string, Buffer>([
    ['users.json', json(ids.map((id, i) => ({ id, name: `p${i}`, is_owner: i === 0, profile: { real_name: `Person ${i}`, email: `p${i}@example.com` } })))],
    ['channels.json', json([{ id: 'C1', name: 'general', created: 1714500000, members: ids, purpose: { value: 'All' } }, { id: 'C2', name: 'random', created: 1714500000, members: ids.slice(0, 2), purpose: { value: '' } }])],
    ['mpims.json', json([{ id: 'G1', name: 'mpdm-three', members: ids.slice(0, 3) }])],
  ])
  for (const [d, day] of days.entries()) {
    files.set(
      `general/${day}.json`,
      json(
        Array.from({ length: messagesPerDay }, (_, i) => ({
          type: 'message',
          user: ids[i % people],
          text: `hello <@${ids[(i + 1) % people]}> number ${i}`,
          ts: `${1714557600 + d * 86400 + i}.000100`,
          ...(i % 3 === 0 ? { thread_ts: `${1714557600 + d * 86400}.000100` } : {}),
          reactions: [{ name: '+1', users: ids.slice(0, 2) }],
        })),
      ),
    )
    files.set(`mpdm-three/${day}.json`, json([{ type: 'message', user: ids[0], text: 'group', ts: `${1714557000 + d * 86400}.000100` }]))
  }
  return files
}

t.test('an import runs the same statements whatever its size', async (t) => {
  const database = await countingDatabase()
  const { services } = await buildTestApp(t, { database })
  const run = async (subdomain: string, people: number, messages: number) => {
    const bundle = slackToBundle(slackFiles(people, messages), { maxJsonBytes: 1 << 24, domain: 'localhost', name: subdomain, progress: () => undefined })
    const { result, statements } = await countStatements(() => importOrganization(services, bundle, { subdomain, progress: () => undefined }))
    return { result, statements }
  }
  const small = await run('small-co', 3, 5)
  const large = await run('large-co', 30, 50)
  t.match(small.result, { users: 3, channels: 2, messages: 12 })
  t.match(large.result, { users: 30, channels: 2, messages: 102 })
  t.equal(large.statements.length, small.statements.length, `${small.statements.length} statements either way`)
})
