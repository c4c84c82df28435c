// mark_all_as_read's batches and its time limit, which HTTP cannot reach
// without 2,000 messages and 50 seconds.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { busItemsDuring } from '../support/events.js'
import { markAllAsRead, markUnreadAsRead } from '../../src/actions/mark-as-read.js'
import { sendTo } from '../http/conversation-support.js'
import type { ActionContext } from '../../src/services.js'
import type { User } from '../../src/db/index.js'
import { Prisma } from '../../src/db/index.js'

t.test('marking read in batches', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { owner } = fx.users
  const ctxFor = (user: User): ActionContext => ({ ...services, realm: fx.realm, user, log: app.log, clientName: 'test' })
  const unreadCount = (user: User) => services.prisma.userMessage.count({ where: { userId: user.id, flags: { equals: 0 } } })

  t.test('works through every batch, newest first, one event per batch', async (t) => {
    const user = await fx.newUser()
    const ids: number[] = []
    for (let i = 0; i < 5; i++) ids.push(await sendTo(t, app, owner, 'general', 'b', `m${i}`))
    const { result, items } = await busItemsDuring(services, () =>
      markUnreadAsRead(ctxFor(user), { messageCondition: Prisma.sql`m.stream_id = ${fx.streams.general.id}`, emitBatches: true, batchSize: 2 }),
      'update_message_flags',
    )
    t.same(result, { count: 5, complete: true })
    t.same(items.map((i) => i.event.messages), [[ids[3], ids[4]], [ids[1], ids[2]], [ids[0]]])
    t.equal(await unreadCount(user), 0)
  })

  t.test('mark_all_as_read stops at its time limit: complete false, no event, progress kept', async (t) => {
    const user = await fx.newUser()
    for (let i = 0; i < 3; i++) await sendTo(t, app, owner, 'general', 't', `m${i}`)
    const { result, items } = await busItemsDuring(services, () => markAllAsRead(ctxFor(user), { timeoutMs: 0, batchSize: 1 }), 'update_message_flags')
    t.same(result, { count: 0, complete: false })
    t.same(items, [])
    t.equal(await unreadCount(user), 3)
    const done = await busItemsDuring(services, () => markAllAsRead(ctxFor(user), { batchSize: 1 }), 'update_message_flags')
    t.same(done.result, { count: 3, complete: true })
    t.same(done.items.map((i) => i.event), [{ type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [], all: true }])
    t.equal(await unreadCount(user), 0)
  })
})
