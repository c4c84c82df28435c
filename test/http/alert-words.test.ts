import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import type { BusItem } from '../../src/events/bus.js'
import { eventually } from '../support/eventually.js'

t.test('alert words', async (t) => {
  const { app, fx, services } = await buildTestApp(t)

  t.test('start empty', async (t) => {
    const member = await fx.newUser()
    t.same(expectSuccess(t, await as(app, member).get('/users/me/alert_words')).alert_words, [])
  })

  t.test('are added once each, case-insensitively, trimmed, and sent to the user', async (t) => {
    const member = await fx.newUser()
    const items: BusItem[] = []
    const stop = services.bus.subscribe((i) => items.push(i))
    t.teardown(stop)
    const body = expectSuccess(t, await as(app, member).post('/users/me/alert_words', { alert_words: ['Roost', ' deploy ', ''] }))
    t.same(body.alert_words, ['Roost', 'deploy'])
    t.same(expectSuccess(t, await as(app, member).post('/users/me/alert_words', { alert_words: ['roost', 'outage'] })).alert_words, ['Roost', 'deploy', 'outage'])
    t.same(expectSuccess(t, await as(app, member).get('/users/me/alert_words')).alert_words, ['Roost', 'deploy', 'outage'])
    await eventually('both events published', () => items.length >= 2).catch(() => undefined)
    t.same(
      items.map((i) => [i.userIds, i.event]),
      [
        [[member.id], { type: 'alert_words', alert_words: ['Roost', 'deploy'] }],
        [[member.id], { type: 'alert_words', alert_words: ['Roost', 'deploy', 'outage'] }],
      ],
    )
  })

  t.test('are removed case-insensitively; unknown words are ignored', async (t) => {
    const member = await fx.newUser()
    await as(app, member).post('/users/me/alert_words', { alert_words: ['Alpha', 'beta'] })
    const body = expectSuccess(t, await as(app, member).delete('/users/me/alert_words', { alert_words: ['ALPHA', 'gamma'] }))
    t.same(body.alert_words, ['beta'])
  })

  t.test('reject a missing list, a non-list and an over-long word', async (t) => {
    const member = await fx.newUser()
    expectError(t, await as(app, member).post('/users/me/alert_words', {}), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'alert_words' argument" })
    expectError(t, await as(app, member).post('/users/me/alert_words', { alert_words: 'word' }), { code: 'BAD_REQUEST' })
    expectError(t, await as(app, member).post('/users/me/alert_words', { alert_words: ['x'.repeat(101)] }), {
      code: 'BAD_REQUEST',
      msg: 'alert_words[0] is too long (limit: 100 characters)',
    })
    t.same(expectSuccess(t, await as(app, member).get('/users/me/alert_words')).alert_words, [])
  })

  t.test('are per user', async (t) => {
    const a = await fx.newUser()
    const b = await fx.newUser()
    await as(app, a).post('/users/me/alert_words', { alert_words: ['mine'] })
    t.same(expectSuccess(t, await as(app, b).get('/users/me/alert_words')).alert_words, [])
  })
})
