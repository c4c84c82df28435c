// Issue 33 item 5: control characters in full names, strict path integers.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'

t.test('full names refuse control characters, as upstream refuses category C', async (t) => {
  const { app, fx } = await buildTestApp(t)
  for (const bad of ['Ann\nLee', 'Ann\rLee', 'Ann\u0085Lee', 'Ann\u2028Lee', 'Ann\u2029Lee', 'Ann\u007fLee', 'Ann\u0007Lee', 'Ann\u009bLee', 'Ann\u202eLee']) {
    expectError(t, await as(app, fx.users.member).patch('/settings', { full_name: bad }), { code: 'BAD_REQUEST', status: 400, msg: 'Invalid characters in name!' })
  }
  expectSuccess(t, await as(app, fx.users.member).patch('/settings', { full_name: 'Ann Lée 李' }))
})

t.test('path integers are digits only', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const id = fx.streams.general.id
  for (const path of [`/streams/%20${id}`, `/streams/${id}%20`, `/streams/+${id}`, `/streams/%09${id}`]) {
    expectError(t, await as(app, fx.users.member).get(path), { code: 'BAD_REQUEST', status: 400, msg: 'stream_id is not an integer' })
  }
  expectSuccess(t, await as(app, fx.users.member).get(`/streams/${id}`))
})
