import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { MemoryEventBus } from '../../src/events/memory-bus.js'

t.test('GET /healthz answers while the process lives', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/healthz' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok' })
})

t.test('GET /readyz checks the database and the bus', async (t) => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ready' })
})

t.test('GET /readyz answers 503 when the bus is down', async (t) => {
  class BrokenBus extends MemoryEventBus {
    override async check(): Promise<void> {
      throw new Error('bus unreachable')
    }
  }
  const { app } = await buildTestApp(t, { bus: new BrokenBus() })
  const res = await app.inject({ method: 'GET', url: '/readyz' })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { status: 'unavailable' })
})
