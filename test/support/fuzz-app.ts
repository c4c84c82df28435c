// The app and fixture the route fuzzer runs against (test/http/fuzz.test.ts, scripts/fuzz.mjs).
import { buildTestApp, type Tap, type TestApp } from './app.js'
import { as } from './client.js'
import { bodyOf } from './expect.js'
import type { FuzzContext } from './fuzz.js'

export async function fuzzTarget(t: Tap): Promise<TestApp & { ctx: FuzzContext }> {
  // A short heartbeat: a generated poll that happens to block ends soon.
  const target = await buildTestApp(t, { config: { heartbeatIntervalSeconds: 1 } })
  const { app, fx } = target
  const sent = bodyOf(await as(app, fx.users.member).post('/messages', { type: 'stream', to: 'general', topic: 'fuzz', content: 'hello' }))
  const ids = [
    fx.users.owner.id,
    fx.users.member.id,
    fx.users.guest.id,
    fx.users.bot.id,
    fx.streams.general.id,
    fx.streams.secret.id,
    fx.realm.id,
    Number(sent.id),
  ]
  const users = [fx.users.member, fx.users.admin, fx.users.guest, fx.users.owner]
  return { ...target, ctx: { host: fx.host, users, ids } }
}
