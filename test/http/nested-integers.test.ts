// Integers inside JSON parameters (narrow operands, recipients, drafts,
// settings) are range-checked by the parameter layer: every value outside the
// database's 32-bit range, and every number JSON cannot hold exactly, answers
// a 400 naming the parameter (docs/input-validation.md).
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { anon, as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'

const OUT_OF_RANGE = [
  { text: '2147483648', why: 'too large' },
  { text: '-2147483649', why: 'too small' },
  { text: '9007199254740993', why: 'too large' },
]

t.test('narrow operands outside 32 bits', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member
  const operators = ['id', 'sender', 'dm', 'pm-with', 'dm-including', 'channel', 'near', 'with']
  for (const { text, why } of OUT_OF_RANGE) {
    for (const operator of operators) {
      const narrow = `[{"operator":"${operator}","operand":${text}}]`
      const msg = `narrow[0]["operand"] is ${why}`
      t.test(`${operator} ${text} on GET /messages, flags/narrow and matches_narrow`, async (t) => {
        expectError(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow }), { code: 'BAD_REQUEST', status: 400, msg })
        expectError(t, await as(app, member).post('/messages/flags/narrow', { anchor: 'newest', num_before: 1, num_after: 0, narrow, op: 'add', flag: 'read' }), {
          code: 'BAD_REQUEST',
          status: 400,
          msg,
        })
        expectError(t, await as(app, member).get('/messages/matches_narrow', { msg_ids: '[1]', narrow }), { code: 'BAD_REQUEST', status: 400, msg })
      })
    }
  }

  t.test('a list operand of dm with an out-of-range ID', async (t) => {
    const narrow = `[{"operator":"dm","operand":[${member.id},2147483648]}]`
    expectError(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow }), {
      code: 'BAD_REQUEST',
      status: 400,
      msg: 'narrow[0]["operand"][1] is too large',
    })
  })

  t.test('message IDs written as strings are range-checked too', async (t) => {
    for (const operator of ['id', 'near', 'with']) {
      const narrow = [{ operator, operand: '2147483648' }]
      expectError(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow }), {
        code: 'BAD_NARROW',
        status: 400,
        msg: 'Invalid narrow operator: Invalid message ID',
      })
    }
  })

  t.test('huge floats inside a narrow', async (t) => {
    const res = await as(app, member).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[{"operator":"id","operand":1e400}]' })
    expectError(t, res, { code: 'BAD_REQUEST', status: 400, msg: 'narrow[0]["operand"] is too large' })
  })

  t.test('in-range operands still work', async (t) => {
    const narrow = [{ operator: 'sender', operand: member.id }]
    expectSuccess(t, await as(app, member).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow }))
  })
})

t.test('message recipients outside 32 bits', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member
  for (const { text, why } of OUT_OF_RANGE) {
    t.test(`to=[${text}] and channel to=${text}`, async (t) => {
      expectError(t, await as(app, member).post('/messages', { type: 'private', to: `[${text}]`, content: 'hi' }), { code: 'BAD_REQUEST', status: 400, msg: `to[0] is ${why}` })
      expectError(t, await as(app, member).post('/messages', { type: 'stream', to: text, topic: 'x', content: 'hi' }), { code: 'BAD_REQUEST', status: 400, msg: `to is ${why}` })
      expectError(t, await as(app, member).post('/messages', { type: 'stream', to: `[${text}]`, topic: 'x', content: 'hi' }), {
        code: 'BAD_REQUEST',
        status: 400,
        msg: `to[0] is ${why}`,
      })
      expectError(t, await as(app, member).post('/typing', { op: 'start', to: `[${text}]` }), { code: 'BAD_REQUEST', status: 400, msg: `to[0] is ${why}` })
      expectError(t, await as(app, member).post('/scheduled_messages', { type: 'direct', to: `[${text}]`, content: 'hi', scheduled_delivery_timestamp: 4102444800 }), {
        code: 'BAD_REQUEST',
        status: 400,
        msg: `to[0] is ${why}`,
      })
    })
  }
  t.test('a recipient of 1e400 is too large', async (t) => {
    expectError(t, await as(app, member).post('/messages', { type: 'private', to: '[1e400]', content: 'hi' }), { code: 'BAD_REQUEST', status: 400, msg: 'to[0] is too large' })
  })
})

t.test('draft timestamps', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member
  for (const timestamp of ['1e400', '1e21', '1e300']) {
    t.test(`a timestamp of ${timestamp} is too large`, async (t) => {
      const drafts = `[{"type":"","to":[],"topic":"","content":"x","timestamp":${timestamp}}]`
      expectError(t, await as(app, member).post('/drafts', { drafts }), { code: 'BAD_REQUEST', status: 400, msg: 'drafts[0]["timestamp"] is too large' })
    })
  }
  t.test('an ordinary timestamp is kept', async (t) => {
    const body = expectSuccess(t, await as(app, member).post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'x', timestamp: 1700000000.5 }] }))
    t.equal(body.ids.length, 1)
  })
})

t.test('settings and group-setting values', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const owner = fx.users.owner
  for (const { text, why } of OUT_OF_RANGE) {
    t.test(`message_retention_days=${text}`, async (t) => {
      expectError(t, await as(app, owner).patch(`/streams/${fx.streams.general.id}`, { message_retention_days: text }), {
        code: 'REQUEST_VARIABLE_INVALID',
        status: 400,
        msg: `Bad value for 'message_retention_days': ${text}`,
      })
      expectError(t, await as(app, owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'retained' }], message_retention_days: text }), {
        code: 'REQUEST_VARIABLE_INVALID',
        status: 400,
        msg: `Bad value for 'message_retention_days': ${text}`,
      })
    })
    t.test(`realm message_retention_days=${text}`, async (t) => {
      expectError(t, await as(app, owner).patch('/realm', { message_retention_days: text }), { code: 'REQUEST_VARIABLE_INVALID', status: 400, msg: `Bad value for 'message_retention_days': ${text}` })
    })
    t.test(`a group-setting value of ${text}`, async (t) => {
      const group = expectSuccess(t, await as(app, owner).post('/user_groups/create', { name: `g${text}`, description: 'd', members: [owner.id] }))
      t.ok(group)
      const groups = expectSuccess(t, await as(app, owner).get('/user_groups')).user_groups as { id: number; name: string }[]
      const id = groups.find((g) => g.name === `g${text}`)?.id
      expectError(t, await as(app, owner).patch(`/user_groups/${id}`, { can_mention_group: `{"new":${text}}` }), {
        code: 'BAD_REQUEST',
        status: 400,
        msg: `can_mention_group["new"] is ${why}`,
      })
      expectError(t, await as(app, owner).patch('/realm', { can_access_all_users_group: text }), { code: 'BAD_REQUEST', status: 400, msg: `can_access_all_users_group is ${why}` })
    })
  }
})

t.test('confirmation pages reject malformed keys with their error page', async (t) => {
  const { app, fx } = await buildTestApp(t)
  for (const key of ['%00', 'a%00b', 'abc', 'A'.repeat(24), `${'a'.repeat(23)}%00`]) {
    const res = await anon(app, fx).request('GET', `/accounts/confirm_new_email/${key}`, {}, { outsideApi: true })
    t.equal(res.statusCode, 404, `key ${key.slice(0, 20)}: status (${res.body.slice(0, 200)})`)
    t.match(res.headers['content-type'], /text\/html/)
    t.match(res.body, /Could not change your email address/)
  }
})

t.test('NUL bytes and lone surrogates inside a JSON `to`', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const member = fx.users.member
  expectError(t, await as(app, member).post('/messages', { type: 'stream', to: '"gen\\u0000eral"', topic: 'x', content: 'hi' }), {
    code: 'BAD_REQUEST',
    status: 400,
    msg: 'to must not contain null bytes',
  })
  expectError(t, await as(app, member).post('/messages', { type: 'stream', to: '["\\ud800"]', topic: 'x', content: 'hi' }), { code: 'BAD_REQUEST', status: 400, msg: 'to[0] is not valid UTF-8' })
  expectError(t, await as(app, member).post('/messages', { type: 'private', to: '["a\\u0000b@example.com"]', content: 'hi' }), {
    code: 'BAD_REQUEST',
    status: 400,
    msg: 'to[0] must not contain null bytes',
  })
})
