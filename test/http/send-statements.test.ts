// A send reads its realm's linkifiers in its first statement (the channel's
// or the direct message's audience, db/send-queries.ts), not in a statement
// of its own: rendering needs them at every send. Counted as
// test/http/set-based.test.ts does; the rendered links show they were used.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { countStatements, countingDatabase } from '../support/statements.js'

const AUTH_LOOKUP = /FROM user_profile u JOIN realm r ON r\.id = u\.realm_id\s+WHERE u\.api_key/
const LINKIFIERS_ALONE = /^\s*SELECT pattern, url_template AS "urlTemplate" FROM realm_linkifier/
const AUDIENCE_WITH_LINKIFIERS = /FROM realm_linkifier l WHERE l\.realm_id = \$\d+::int\) AS linkifiers/

t.test("a send's linkifiers come with its audience", async (t) => {
  const database = await countingDatabase()
  const { app, fx, services } = await buildTestApp(t, { database })
  const { admin, member, otherMember } = fx.users
  expectSuccess(t, await as(app, admin).post('/realm/filters', { pattern: 'T-(?P<id>[0-9]+)', url_template: 'https://tracker.example/T/{id}' }))

  const sends = {
    'to a channel': { type: 'stream', to: fx.streams.general.name, topic: 'links', content: 'fixes T-12' },
    'a direct message': { type: 'direct', to: JSON.stringify([otherMember.id]), content: 'fixes T-34' },
  }
  for (const [name, params] of Object.entries(sends)) {
    t.test(name, async (t) => {
      expectSuccess(t, await as(app, member).get('/users/me')) // the authentication cache holds the sender, as for any request
      const { result, statements } = await countStatements(() => as(app, member).post('/messages', params), { untracked: true })
      const { id } = expectSuccess(t, result) as { id: number }
      const own = statements.filter((sql) => !AUTH_LOOKUP.test(sql))
      t.equal(own.filter((sql) => LINKIFIERS_ALONE.test(sql)).length, 0, 'no statement reads the linkifiers alone')
      t.equal(own.filter((sql) => AUDIENCE_WITH_LINKIFIERS.test(sql)).length, 1, 'the audience statement reads them')
      const row = await services.prisma.message.findUniqueOrThrow({ where: { id } })
      const number = params.content.slice('fixes T-'.length)
      t.equal(row.renderedContent, `<p>fixes <a href="https://tracker.example/T/${number}">T-${number}</a></p>`, 'the linkifier applied')
    })
  }
})
