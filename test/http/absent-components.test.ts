// Upstream changes above level 277 that concern components Roost does not
// have (docs/feature-levels.md, "answered as absent"): their endpoints answer
// as on a server without them, and register describes no such component.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import { captureEvents } from '../support/events.js'

t.test('components Roost does not have', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { owner, member } = fx.users
  const notFound = { code: 'NOT_FOUND', status: 404, msg: 'Endpoint not found' }

  t.test('their endpoints are not found (levels 282, 295, 304, 335, 337, 345)', async (t) => {
    expectError(t, await as(app, member).post('/users/me/tutorial_status', { status: 'finished' }), notFound)
    expectError(t, await as(app, owner).get('/export/realm/consents'), notFound)
    expectError(t, await as(app, member).post('/tus', {}), notFound)
    expectError(t, await as(app, owner).get('/export/realm'), notFound)
    expectError(t, await as(app, owner).post('/export/realm', { export_type: 1 }), notFound)
    expectError(t, await as(app, member).get(`/streams/${fx.streams.general.id}/email_address`), notFound)
    expectError(t, await as(app, member).post('/calls/bigbluebutton/create', { meeting_name: 'standup', voice_only: true }), notFound)
    expectError(t, await as(app, owner).post('/remotes/server/register/transfer', { hostname: 'chat.example.com' }), notFound)
  })

  t.test('register offers no incoming-webhook integration and no call provider but Jitsi Meet (levels 318, 353)', async (t) => {
    const state = expectSuccess(t, await as(app, member).post('/register', { fetch_event_types: JSON.stringify(['realm', 'realm_incoming_webhook_bots']) }))
    t.same(state.realm_incoming_webhook_bots, [])
    t.same(Object.keys(state.realm_available_video_chat_providers).sort(), ['disabled', 'jitsi_meet'])
    for (const provider of [2, 3, 4, 5, 6]) {
      expectError(t, await as(app, owner).patch('/realm', { video_chat_provider: provider }), { code: 'BAD_REQUEST', status: 400, msg: `Invalid video_chat_provider ${provider}` })
    }
  })

  t.test('no realm_export_consent events (level 312): a changed allow_private_data_export tells only the user', async (t) => {
    const seen = await captureEvents(app, owner, () => as(app, member).patch('/settings', { allow_private_data_export: true }), {
      register: { event_types: ['realm_export_consent', 'user_settings'] },
      expectNone: true,
    })
    t.same(seen, [])
    const own = await captureEvents(app, member, () => as(app, member).patch('/settings', { allow_private_data_export: false }), {
      register: { event_types: ['realm_export_consent', 'user_settings'] },
    })
    t.same(own.map(({ id: _id, ...e }) => e), [{ type: 'user_settings', op: 'update', property: 'allow_private_data_export', value: false }])
  })

  t.test('register: the deletion bounds of a deactivated organization (level 332) and no billing (level 363)', async (t) => {
    const state = expectSuccess(t, await as(app, owner).post('/register', { fetch_event_types: JSON.stringify(['realm', 'realm_billing']) }))
    t.equal(state.server_min_deactivated_realm_deletion_days, 14)
    t.equal(state.server_max_deactivated_realm_deletion_days, null)
    t.same(state.realm_billing, { has_pending_sponsorship_request: false })
    const noBilling = expectSuccess(t, await as(app, owner).post('/register', { fetch_event_types: JSON.stringify(['realm']) }))
    t.notOk('realm_billing' in noBilling, 'only when asked for, as upstream')
    // Organizations are deactivated by the operator (roost org deactivate), so there is no endpoint to take deletion_delay_days.
    expectError(t, await as(app, owner).post('/realm/deactivate', { deletion_delay_days: 30 }), notFound)
  })
})
