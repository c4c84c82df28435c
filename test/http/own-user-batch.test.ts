// GET /users/me requests that reach the database in the same turn of the
// event loop share one statement (queries/users.ts ownUserLoader): each still
// gets its own user's fields, profile data and max_message_id, and a message
// committed before a request is counted in its answer.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess, type Body } from '../support/expect.js'
import { countStatements, countingDatabase } from '../support/statements.js'

const OWN_USERS = /FROM unnest\(string_to_array\(\$1, ','\)::int\[\]\) AS u\(id\)/

t.test('concurrent GET /users/me: one statement, each user their own answer', async (t) => {
  const database = await countingDatabase()
  const { app, fx } = await buildTestApp(t, { database })
  const { owner, admin, member, otherMember } = fx.users
  const field = expectSuccess(t, await as(app, owner).post('/realm/profile_fields', { name: 'Team', field_type: 1, hint: '' })).id as number
  expectSuccess(t, await as(app, member).patch('/users/me/profile_data', { data: JSON.stringify([{ id: field, value: 'Platform' }]) }))
  const direct = expectSuccess(t, await as(app, owner).post('/messages', { type: 'direct', to: JSON.stringify([member.id]), content: 'only for the member' })).id as number
  const users = [owner, admin, member, otherMember]
  const alone: Body[] = []
  for (const user of users) alone.push(expectSuccess(t, await as(app, user).get('/users/me')))

  const { result, statements } = await countStatements(() => Promise.all(users.map((user) => as(app, user).get('/users/me'))), { untracked: true })
  const together = result.map((response) => expectSuccess(t, response))
  t.strictSame(together, alone, 'each answer is the one the user gets alone')
  t.equal(statements.filter((sql) => OWN_USERS.test(sql)).length, 1, 'one statement for the four requests')
  t.same(together.map((body) => body.user_id), users.map((user) => user.id))
  t.strictSame(together[2]?.profile_data, { [String(field)]: { value: 'Platform', rendered_value: '<p>Platform</p>' } }, "the member's profile field")
  t.strictSame(together[3]?.profile_data, {}, 'none for another member')
  t.equal(together[2]?.max_message_id, direct, "the member's newest message")
  t.ok((together[3]?.max_message_id as number) < direct, 'another member did not receive it')

  // A message sent before the next requests is in their answers.
  const later = expectSuccess(t, await as(app, admin).post('/messages', { type: 'direct', to: JSON.stringify([member.id]), content: 'later' })).id as number
  const again = (await Promise.all([member, admin, owner].map((user) => as(app, user).get('/users/me')))).map((response) => expectSuccess(t, response))
  t.same(again.map((body) => body.max_message_id), [later, later, direct])
})
