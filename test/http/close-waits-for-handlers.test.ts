// Closing the app waits for the route handlers still running, even when
// their client hung up (its connection then no longer holds the HTTP server
// open), before it closes the event queues they use.
import { request } from 'node:http'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { route } from '../../src/http/route.js'
import { MemoryEventBus } from '../../src/events/memory-bus.js'
import { servicesOver } from '../../src/node-services.js'
import { memoryBackends } from '../../src/backends/index.js'
import { RunningHandlers } from '../../src/http/running-handlers.js'
import { makeFixture, testConfig, testDatabase } from '../support/app.js'
import { basicAuth } from '../support/client.js'

t.test('app.close waits for a handler whose client went away', async (t) => {
  const bus = new MemoryEventBus()
  const services = servicesOver(testConfig(), await testDatabase(), memoryBackends({ rateLimiting: false }, { bus }))
  let started!: () => void
  const handlerStarted = new Promise<void>((resolve) => (started = resolve))
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const steps: string[] = []
  const slow = route({
    method: 'POST',
    url: '/test/slow',
    handler: async (_input, ctx) => {
      started()
      await released
      // Still usable: the queues are closed only after this handler settles.
      const queue = await ctx.events.register({ userId: ctx.user.id, userEmail: ctx.user.email, realmId: ctx.realm.id, eventTypes: ['message'] })
      steps.push(`handler registered ${typeof queue.queueId}`)
      return {}
    },
  })
  const app = await buildApp({ services, routes: [slow] })
  t.teardown(() => bus.close())
  const fx = await makeFixture(services)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }

  const member = fx.users.member
  const headers = { authorization: basicAuth(member.deliveryEmail, member.apiKey), host: fx.host }
  const client = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/test/slow', headers })
  client.on('error', () => undefined)
  client.end()
  await handlerStarted
  client.destroy()

  const closed = app.close().then(() => steps.push('closed'))
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.same(steps, [], 'close is still waiting for the handler')
  release()
  await closed
  t.same(steps, ['handler registered string', 'closed'], 'the handler finished with the queues open, then the app closed')
})

t.test('RunningHandlers.settled gives up after its timeout', async (t) => {
  const handlers = new RunningHandlers()
  const never = handlers.track(new Promise<void>(() => undefined))
  void never
  t.equal(handlers.count, 1)
  t.equal(await handlers.settled(50), false)
  const done = handlers.track(Promise.resolve(7))
  t.equal(await done, 7)
  const failed = handlers.track(Promise.reject(new Error('x')))
  await t.rejects(failed)
  t.equal(handlers.count, 1, 'settled handlers are forgotten, failed ones too')
  t.equal(await new RunningHandlers().settled(50), true)
})
