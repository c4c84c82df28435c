// Upstream changes above level 277 that concern components Roost does not
// have (docs/feature-levels.md, "answered as absent"): their endpoints answer
// as on a server without them, and register describes no such component.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'

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
})
