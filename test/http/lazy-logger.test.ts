// The per-request logger bound to the user: made on first use, and then the
// same as the pino child it stands for.
import { Writable } from 'node:stream'
import t from 'tap'
import Fastify from 'fastify'
import { lazyChildLogger } from '../../src/http/lazy-logger.js'

function capturingApp(level = 'info') {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>)
      done()
    },
  })
  return { app: Fastify({ logger: { level, stream } }), lines }
}

t.test('logs with the bindings, like the child it stands for', async (t) => {
  const { app, lines } = capturingApp()
  const log = lazyChildLogger(app.log, { user_id: 7 })
  log.info({ queue_id: 'q1' }, 'event queue registered')
  log.warn('plain message')
  log.child({ request: 'r' }).error('from a grandchild')
  await new Promise((resolve) => setImmediate(resolve))
  t.match(lines, [
    { level: 30, user_id: 7, queue_id: 'q1', msg: 'event queue registered' },
    { level: 40, user_id: 7, msg: 'plain message' },
    { level: 50, user_id: 7, request: 'r', msg: 'from a grandchild' },
  ])
})

t.test('makes no child until it is used, and honours the level', async (t) => {
  const { app, lines } = capturingApp('warn')
  let children = 0
  const parent = Object.assign(Object.create(app.log) as typeof app.log, {
    child: (bindings: Record<string, unknown>) => {
      children++
      return app.log.child(bindings)
    },
  })
  const log = lazyChildLogger(parent, { user_id: 8 })
  t.equal(children, 0)
  t.equal(log.level, 'warn')
  log.info('below the level')
  log.error('above it')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(children, 1, 'one child, made on first use')
  t.match(lines, [{ level: 50, user_id: 8, msg: 'above it' }])
  t.equal(lines.length, 1)
})

t.test('reading the level or logging below it makes no child; a level given to the child wins', async (t) => {
  const { app, lines } = capturingApp('info')
  let children = 0
  const parent = Object.assign(Object.create(app.log) as typeof app.log, {
    child: (bindings: Record<string, unknown>, options?: { level?: string }) => {
      children++
      return app.log.child(bindings, options)
    },
  })
  const inherits = lazyChildLogger(parent, { request_id: 'r1' })
  t.equal(inherits.level, 'info')
  inherits.debug('below the level')
  inherits.silent('never written')
  t.equal(children, 0, 'no child for the level or a dropped call')
  const quieter = lazyChildLogger(parent, { request_id: 'r2' }, { level: 'error' })
  t.equal(quieter.level, 'error')
  quieter.warn('below its own level')
  quieter.error('at its level')
  inherits.info('at the parent level')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(children, 2)
  t.match(lines, [
    { level: 50, request_id: 'r2', msg: 'at its level' },
    { level: 30, request_id: 'r1', msg: 'at the parent level' },
  ])
  t.equal(lines.length, 2)
})
