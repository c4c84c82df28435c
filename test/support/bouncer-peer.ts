// A push notification bouncer on loopback for tests (plain HTTP), answering
// as upstream's bouncer (zilencer) does: HTTP Basic auth with a registered
// server's UUID and key (else 401 INVALID_ZULIP_SERVER); push/register and
// push/unregister as form fields (token, token_kind 1 or 2, user_uuid,
// realm_uuid, user_id, ios_app_id for APNs; "Token does not exist" when
// unregistering an unknown one); push/notify as JSON (user_id, user_uuid,
// realm_uuid, apns_payload, gcm_payload, gcm_options, android_devices,
// apple_devices), answered with the devices it has registered for the user
// and, under deleted_devices, the listed tokens it does not have.
// `failWith` makes every push/notify answer that status.
import { randomBytes, randomUUID } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface BouncerNotification {
  user_id: number
  user_uuid: string
  realm_uuid: string
  apns_payload: Record<string, unknown>
  gcm_payload: Record<string, unknown>
  gcm_options: Record<string, unknown>
  android_devices: string[]
  apple_devices: string[]
  /** Registered tokens the bouncer sent it to. */
  delivered: { android: string[]; apple: string[] }
}

export interface Registration {
  userUuid: string
  userId: string
  realmUuid: string
  token: string
  kind: number
  iosAppId: string | undefined
}

export interface BouncerPeer {
  url: string
  orgId: string
  orgKey: string
  registrations: Registration[]
  notifications: BouncerNotification[]
  /** Requests refused for bad credentials. */
  authFailures: number
  failWith: number | undefined
  close(): Promise<void>
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export async function startBouncerPeer(): Promise<BouncerPeer> {
  const peer: BouncerPeer = {
    url: '',
    orgId: randomUUID(),
    orgKey: randomBytes(32).toString('hex'),
    registrations: [],
    notifications: [],
    authFailures: 0,
    failWith: undefined,
    close: async () => undefined,
  }
  const error = (res: ServerResponse, status: number, msg: string, code = 'BAD_REQUEST') =>
    void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ result: 'error', msg, code }))
  const success = (res: ServerResponse, data: object = {}) =>
    void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result: 'success', msg: '', ...data }))
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const [user, key] = Buffer.from((/^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''), 'base64').toString().split(':')
      if (user !== peer.orgId || key !== peer.orgKey) {
        peer.authFailures++
        return error(res, 401, `Zulip server auth failure: ${user ?? ''} is not registered -- did you run \`manage.py register_server\`?`, 'INVALID_ZULIP_SERVER')
      }
      if (req.method !== 'POST') return error(res, 405, 'Method Not Allowed')
      if (req.url === '/api/v1/remotes/push/register' || req.url === '/api/v1/remotes/push/unregister') {
        if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return error(res, 400, 'not a form')
        const form = new URLSearchParams(body)
        const token = form.get('token') ?? ''
        const kind = Number(form.get('token_kind'))
        if (token === '' || token.length > 4096) return error(res, 400, 'Empty or invalid length token')
        if (kind !== 1 && kind !== 2) return error(res, 400, 'Invalid token type')
        if (kind === 1 && !/^(?:[0-9a-f]{2})+$/i.test(token)) return error(res, 400, 'Invalid APNS token')
        const userUuid = form.get('user_uuid') ?? ''
        const realmUuid = form.get('realm_uuid') ?? ''
        if (!UUID.test(userUuid) || !UUID.test(realmUuid)) return error(res, 400, 'Invalid user_uuid or realm_uuid')
        if (form.get('server_uuid') !== peer.orgId) return error(res, 400, 'server_uuid does not match the credentials')
        const same = (r: Registration) => r.userUuid === userUuid && r.token === token && r.kind === kind
        if (req.url.endsWith('/unregister')) {
          const before = peer.registrations.length
          peer.registrations = peer.registrations.filter((r) => !same(r))
          return before === peer.registrations.length ? error(res, 400, 'Token does not exist') : success(res)
        }
        const iosAppId = form.get('ios_app_id') ?? undefined
        if (kind === 1 && iosAppId === undefined) return error(res, 400, 'Missing ios_app_id')
        if (!peer.registrations.some(same)) peer.registrations.push({ userUuid, userId: form.get('user_id') ?? '', realmUuid, token, kind, iosAppId })
        return success(res)
      }
      if (req.url === '/api/v1/remotes/push/notify') {
        if (req.headers['content-type'] !== 'application/json') return error(res, 400, 'not JSON')
        if (peer.failWith !== undefined) return error(res, peer.failWith, 'Internal server error')
        const p = JSON.parse(body) as Omit<BouncerNotification, 'delivered'>
        const objects = [p.apns_payload, p.gcm_payload, p.gcm_options].every((o) => typeof o === 'object' && o !== null && !Array.isArray(o))
        if (!UUID.test(p.user_uuid) || !UUID.test(p.realm_uuid) || typeof p.user_id !== 'number' || !objects || !Array.isArray(p.android_devices) || !Array.isArray(p.apple_devices)) {
          return error(res, 400, `Malformed payload: ${body.slice(0, 200)}`)
        }
        const mine = peer.registrations.filter((r) => r.userUuid === p.user_uuid)
        const android = mine.filter((r) => r.kind === 2).map((r) => r.token)
        const apple = mine.filter((r) => r.kind === 1).map((r) => r.token)
        peer.notifications.push({ ...p, delivered: { android, apple } })
        return success(res, {
          total_android_devices: android.length,
          total_apple_devices: apple.length,
          deleted_devices: { android_devices: p.android_devices.filter((t) => !android.includes(t)), apple_devices: p.apple_devices.filter((t) => !apple.includes(t)) },
          realm: null,
        })
      }
      error(res, 404, 'Not found')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  peer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  peer.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return peer
}
