// is_recently_active (upstream level 323): on every channel object; the
// daily check (scheduler/stream-activity.ts) marks channels without a message
// in 180 days inactive and those with one active, once a day per realm; a
// message sent to, or moved into, an inactive channel marks it active. Every
// change reaches clients as a `stream` `update`, under the state check.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess, type Body } from '../support/expect.js'
import { checkStateAfter } from '../support/state-check.js'
import { checkDueRealm } from '../../src/scheduler/stream-activity.js'

const DAY = 24 * 3600 * 1000

t.test('is_recently_active', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { admin, member, otherMember } = fx.users
  const { general, design, secret } = fx.streams
  const realmIds = [fx.realm.id]
  const at = (ms: number) => ({ ...services, now: () => new Date(ms) })
  const flags = async (): Promise<Record<string, boolean>> => {
    const streams = expectSuccess(t, await as(app, admin).get('/streams', { include_all: true })).streams as Body[]
    return Object.fromEntries(streams.map((s) => [s.name as string, s.is_recently_active as boolean]))
  }
  const designMessage = expectSuccess(t, await as(app, member).post('/messages', { type: 'stream', to: design.id, topic: 'shapes', content: 'circles' })).id as number

  t.test('a new channel is active, wherever channels appear', async (t) => {
    expectSuccess(t, await as(app, member).post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'fresh' }]) }))
    const fresh = await services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'fresh' } })
    t.match(expectSuccess(t, await as(app, member).get(`/streams/${fresh.id}`)).stream, { is_recently_active: true })
    t.match((expectSuccess(t, await as(app, member).get('/users/me/subscriptions')).subscriptions as Body[]).find((s) => s.name === 'fresh'), { is_recently_active: true })
    const state = expectSuccess(t, await as(app, otherMember).post('/register', { fetch_event_types: ['subscription', 'stream'] }))
    t.match((state.never_subscribed as Body[]).find((s) => s.name === 'fresh'), { is_recently_active: true })
    t.match((state.streams as Body[]).find((s) => s.name === 'fresh'), { is_recently_active: true })
    t.equal((await flags()).fresh, true)
  })

  t.test('the daily check marks channels without a recent message inactive, once a day', async (t) => {
    const events = await checkStateAfter(t, app, otherMember, () => checkDueRealm(services, { realmIds }), { expectTypes: ['stream/update'] })
    // fresh has the notification bot's "channel created" message; general and secret have none.
    t.same(events.filter((e) => e.type === 'stream'), [{ type: 'stream', op: 'update', stream_id: general.id, name: 'general', property: 'is_recently_active', value: false, id: events.find((e) => e.type === 'stream')?.id }])
    t.notOk(events.some((e) => e.stream_id === secret.id), 'a private channel the user cannot see is not told of')
    t.same(await flags(), { design: true, fresh: true, general: false, secret: false })
    t.equal(await checkDueRealm(services, { realmIds }), 0, 'not due again the same day')
    t.equal(await checkDueRealm(at(Date.now() + DAY + 60_000), { realmIds }), 1, 'due again a day later')
    t.same(await flags(), { design: true, fresh: true, general: false, secret: false }, 'nothing changed meanwhile')
  })

  t.test('a message to an inactive channel marks it active, with the event', async (t) => {
    const events = await checkStateAfter(t, app, otherMember, () => as(app, member).post('/messages', { type: 'stream', to: general.id, topic: 'hello', content: 'back' }), {
      expectTypes: ['stream/update', 'message'],
    })
    t.match(events.filter((e) => e.type === 'stream' && e.property === 'is_recently_active'), [{ op: 'update', stream_id: general.id, value: true }])
    t.equal((await flags()).general, true)
    const again = await checkStateAfter(t, app, otherMember, () => as(app, member).post('/messages', { type: 'stream', to: general.id, topic: 'hello', content: 'again' }), {
      expectTypes: ['message'],
    })
    t.notOk(again.some((e) => e.type === 'stream' && e.property === 'is_recently_active'), 'an active channel is not announced again')
  })

  t.test('half a year later every channel is inactive again', async (t) => {
    const later = Date.now() + 181 * DAY
    await checkStateAfter(t, app, member, () => checkDueRealm(at(later), { realmIds }), { expectTypes: ['stream/update'] })
    t.same(await flags(), { design: false, fresh: false, general: false, secret: false })
  })

  t.test('moving a recent message into an inactive channel marks it active; the channel it left stays as it was', async (t) => {
    const fresh = await services.prisma.stream.findFirstOrThrow({ where: { realmId: fx.realm.id, name: 'fresh' } })
    const events = await checkStateAfter(t, app, member, () => as(app, admin).patch(`/messages/${designMessage}`, { stream_id: fresh.id }), {
      expectTypes: ['stream/update', 'update_message'],
    })
    t.match(events.filter((e) => e.type === 'stream' && e.property === 'is_recently_active'), [{ stream_id: fresh.id, value: true }])
    t.same(await flags(), { design: false, fresh: true, general: false, secret: false })
  })
})
