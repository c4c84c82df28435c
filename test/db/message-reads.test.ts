// GET /messages' named statements (db/message-reads.ts) are planned once per
// connection, not at every request: after its five custom plans PostgreSQL
// keeps a statement's generic plan only when it costs no more than the
// custom ones. Each statement is prepared as the pg driver prepares it, run
// six times with one-element lists (where a custom plan that sees the array
// would be cheapest), and pg_prepared_statements must count a generic plan.
import t from 'tap'
import { MESSAGE_LOOKUPS_SQL, messageLookups, STREAMS_WITH_SUBSCRIPTION_SQL, streamsWithSubscription } from '../../src/db/message-reads.js'
import { buildTestApp } from '../support/app.js'

const STATEMENTS = [
  { name: 'test_message_lookups', sql: MESSAGE_LOOKUPS_SQL, types: 'text, text, text', args: (ids: { stream: number; user: number }) => `'1', '${ids.user}', '${ids.stream}'` },
  { name: 'test_streams_with_subscription', sql: STREAMS_WITH_SUBSCRIPTION_SQL, types: 'text, int, int', args: (ids: { stream: number; user: number; realm: number }) => `'${ids.stream}', ${ids.user}, ${ids.realm}` },
]

t.test("GET /messages' statements keep a generic plan", async (t) => {
  const { services, fx } = await buildTestApp(t)
  const ids = { stream: fx.streams.general.id, user: fx.users.member.id, realm: fx.realm.id }
  for (const { name, sql, types, args } of STATEMENTS) {
    const counts = await services.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`PREPARE ${name}(${types}) AS ${sql}`)
      try {
        for (let run = 0; run < 6; run++) await tx.$queryRawUnsafe(`EXECUTE ${name}(${args(ids)})`)
        const [row] = await tx.$queryRawUnsafe<Array<{ generic: number; custom: number }>>(
          `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = '${name}'`,
        )
        return row ?? { generic: 0, custom: 0 }
      } finally {
        await tx.$executeRawUnsafe(`DEALLOCATE ${name}`)
      }
    })
    t.equal(counts.custom, 5, `${name}: five custom plans`)
    t.ok(counts.generic >= 1, `${name}: then the generic plan (${counts.generic} runs)`)
  }
})

t.test('the statements answer as before', async (t) => {
  const { services, fx } = await buildTestApp(t)
  const [found] = await streamsWithSubscription(services.prisma, fx.realm.id, fx.users.member.id, [fx.streams.general.id])
  t.equal(found?.stream.id, fx.streams.general.id)
  t.equal(found?.subscribed, true, 'the member is subscribed to general')
  t.strictSame(await streamsWithSubscription(services.prisma, fx.realm.id + 1_000, fx.users.member.id, [fx.streams.general.id]), [], 'not in another realm')
  const lookups = await messageLookups(services.prisma, [], [fx.users.member.id], [fx.streams.general.id])
  t.strictSame(lookups.reactions, [])
  t.match(lookups.users, [{ id: fx.users.member.id, email: fx.users.member.email }])
  t.strictSame(lookups.streams, [{ id: fx.streams.general.id, name: fx.streams.general.name }])
})
