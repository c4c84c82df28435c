// Rendered size is bounded (issue 33, item 2): content whose HTML would exceed
// MAX_RENDERED_CONTENT_BYTES is refused wherever content is rendered, with a
// 400 naming the problem and nothing stored.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { MAX_MESSAGE_LENGTH, MAX_RENDERED_CONTENT_BYTES } from '../../src/domain/limits.js'

/** 10,000 characters that render to about a megabyte of emoji markup. */
const AMPLIFIED = '⁉'.repeat(MAX_MESSAGE_LENGTH)
const REFUSAL = { code: 'BAD_REQUEST', status: 400, msg: `Unable to render message: its rendered content would exceed ${MAX_RENDERED_CONTENT_BYTES} bytes` }

t.test('content rendering past the cap', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member } = fx.users
  const { general } = fx.streams
  const messageCount = () => services.prisma.message.count({ where: { realmId: fx.realm.id } })

  t.test('is refused by POST /messages, and nothing is stored', async (t) => {
    const before = await messageCount()
    expectError(t, await as(app, member).post('/messages', { type: 'stream', to: general.id, topic: 'big', content: AMPLIFIED }), REFUSAL)
    t.equal(await messageCount(), before)
  })

  t.test('is refused by POST /messages/render', async (t) => {
    expectError(t, await as(app, member).post('/messages/render', { content: AMPLIFIED }), REFUSAL)
  })

  t.test('is refused by PATCH /messages/{id}; the message keeps its content', async (t) => {
    const sent = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: general.id, topic: 'edit', content: 'small' }))
    expectError(t, await as(app, member).patch(`/messages/${sent.id}`, { content: AMPLIFIED }), REFUSAL)
    const stored = await services.prisma.message.findUniqueOrThrow({ where: { id: sent.id } })
    t.equal(stored.content, 'small')
    t.equal(stored.renderedContent, '<p>small</p>')
    t.equal(stored.editHistory, null)
  })

  t.test('is refused by POST and PATCH /scheduled_messages', async (t) => {
    const at = Math.floor(Date.now() / 1000) + 3600
    expectError(
      t,
      await as(app, member).post('/scheduled_messages', { type: 'stream', to: general.id, topic: 'later', content: AMPLIFIED, scheduled_delivery_timestamp: at }),
      REFUSAL,
    )
    t.same(expectSuccess(t, await as(app, member).get('/scheduled_messages')).scheduled_messages, [])
    const { scheduled_message_id: id } = expectSuccess(
      t,
      await as(app, member).post('/scheduled_messages', { type: 'stream', to: general.id, topic: 'later', content: 'soon', scheduled_delivery_timestamp: at }),
    )
    expectError(t, await as(app, member).patch(`/scheduled_messages/${id}`, { content: AMPLIFIED }), REFUSAL)
    t.match(expectSuccess(t, await as(app, member).get('/scheduled_messages')).scheduled_messages, [{ scheduled_message_id: id, content: 'soon' }])
  })

  t.test('content under the cap renders as before', async (t) => {
    const rendered = expectSuccess(t, await as(app, member).post('/messages/render', { content: '⁉'.repeat(100) })).rendered as string
    t.ok(rendered.startsWith('<p><span aria-label="interrobang"'))
    t.ok(Buffer.byteLength(rendered) <= MAX_RENDERED_CONTENT_BYTES)
  })
})
