// POST/DELETE /users/me/apns_device_token and /users/me/android_gcm_reg_id.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'

const APNS = 1
const FCM = 2

t.test('push device registration', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const { member, otherMember, guest, bot } = fx.users
  const devices = (userId: number) =>
    services.prisma.pushDevice.findMany({ where: { userId }, orderBy: { id: 'asc' }, select: { kind: true, token: true, appId: true } })

  t.test('registers an FCM token once, however often it is sent, and removes it', async (t) => {
    const token = 'fcm-token:' + 'x'.repeat(150)
    for (let i = 0; i < 2; i++) t.same(expectSuccess(t, await as(app, member).post('/users/me/android_gcm_reg_id', { token })), { result: 'success', msg: '' })
    t.same(await devices(member.id), [{ kind: FCM, token, appId: null }])
    expectSuccess(t, await as(app, member).delete('/users/me/android_gcm_reg_id', { token }))
    t.same(await devices(member.id), [])
    expectError(t, await as(app, member).delete('/users/me/android_gcm_reg_id', { token }), { code: 'BAD_REQUEST', msg: 'Token does not exist' })
  })

  t.test('registers an APNs token (hex, any case) with its app ID', async (t) => {
    const token = 'AB'.repeat(32)
    expectSuccess(t, await as(app, member).post('/users/me/apns_device_token', { token, appid: 'org.zulip.Zulip' }))
    expectSuccess(t, await as(app, member).post('/users/me/apns_device_token', { token: token.toLowerCase(), appid: 'com.example.Chat' }))
    t.same(await devices(member.id), [{ kind: APNS, token: token.toLowerCase(), appId: 'com.example.Chat' }], 'one device, the latest app ID')
    expectError(t, await as(app, member).delete('/users/me/android_gcm_reg_id', { token }), { code: 'BAD_REQUEST', msg: 'Token does not exist' })
    expectSuccess(t, await as(app, member).delete('/users/me/apns_device_token', { token }))
    t.same(await devices(member.id), [])
  })

  t.test('tokens are per user', async (t) => {
    expectSuccess(t, await as(app, member).post('/users/me/android_gcm_reg_id', { token: 'shared' }))
    expectSuccess(t, await as(app, otherMember).post('/users/me/android_gcm_reg_id', { token: 'shared' }))
    expectError(t, await as(app, guest).delete('/users/me/android_gcm_reg_id', { token: 'shared' }), { code: 'BAD_REQUEST', msg: 'Token does not exist' })
    expectSuccess(t, await as(app, otherMember).delete('/users/me/android_gcm_reg_id', { token: 'shared' }))
    t.same(await devices(member.id), [{ kind: FCM, token: 'shared', appId: null }])
    expectSuccess(t, await as(app, guest).post('/users/me/android_gcm_reg_id', { token: 'guest-device' }))
  })

  t.test('bad input names the problem', async (t) => {
    const post = (path: string, params: Record<string, unknown>) => as(app, member).post(path, params)
    expectError(t, await post('/users/me/android_gcm_reg_id', { token: '' }), { code: 'BAD_REQUEST', msg: 'Empty or invalid length token' })
    expectError(t, await post('/users/me/android_gcm_reg_id', { token: 'x'.repeat(4097) }), { code: 'BAD_REQUEST', msg: 'Empty or invalid length token' })
    expectSuccess(t, await post('/users/me/android_gcm_reg_id', { token: 'y'.repeat(4096) }))
    expectError(t, await post('/users/me/android_gcm_reg_id', {}), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'token' argument" })
    expectError(t, await post('/users/me/apns_device_token', { token: 'not hex!', appid: 'org.zulip.Zulip' }), { code: 'BAD_REQUEST', msg: 'Invalid APNS token' })
    expectError(t, await post('/users/me/apns_device_token', { token: 'abc', appid: 'org.zulip.Zulip' }), { code: 'BAD_REQUEST', msg: 'Invalid APNS token' })
    expectError(t, await post('/users/me/apns_device_token', { token: 'abcd' }), { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'appid' argument" })
    expectError(t, await post('/users/me/apns_device_token', { token: 'abcd', appid: 'bad app id' }), { code: 'BAD_REQUEST', msg: 'Invalid app ID' })
    expectError(t, await as(app, member).delete('/users/me/apns_device_token', { token: 'zz' }), { code: 'BAD_REQUEST', msg: 'Invalid APNS token' })
    expectError(t, await as(app, bot).post('/users/me/android_gcm_reg_id', { token: 'bot' }), { code: 'BAD_REQUEST', msg: 'This endpoint does not accept bot requests.' })
    t.same((await devices(member.id)).map((d) => d.token.length), [6, 4096])
  })
})
