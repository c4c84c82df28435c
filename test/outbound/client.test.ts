// The outbound client against real listeners on loopback: refusals before any
// connection, the allow-list, the Host header and the pinned address, the
// total timeout and the response-size limit, OUTBOUND_ALLOW's validation, and
// the FCM and APNs senders going through the same checks.
import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ConfigError, loadConfig } from '../../src/config.js'
import { OutboundClient, OutboundRefused, parseAllowEntry } from '../../src/outbound/index.js'
import { ApnsSender, FcmSender } from '../../src/notifications/push-senders.js'

async function server(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const requests: IncomingMessage[] = []
  const s = createServer((req, res) => {
    requests.push(req)
    handler(req, res)
  })
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  return {
    port: (s.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        s.close(() => resolve())
        s.closeAllConnections()
      }),
  }
}

t.test('OUTBOUND_ALLOW is validated at startup', async (t) => {
  t.same(loadConfig({}).outboundAllow, [])
  t.match(loadConfig({ OUTBOUND_ALLOW: 'push-gw.internal:8443, 10.0.0.7, [fd00::7]:443, 10.20.0.0/16, fd00::/8' }).outboundAllow, [
    { kind: 'name', name: 'push-gw.internal', port: 8443 },
    { kind: 'address', address: '10.0.0.7' },
    { kind: 'address', port: 443 },
    { kind: 'range', text: '10.20.0.0/16' },
    { kind: 'range', text: 'fd00::/8' },
  ])
  for (const bad of ['http://gw', 'gw:0', 'gw:70000', '10.0.0.0/33', 'under_score.example', '[::1', 'a b']) {
    t.throws(() => loadConfig({ OUTBOUND_ALLOW: bad }), ConfigError, bad)
    t.throws(() => loadConfig({ OUTBOUND_ALLOW: bad }), { message: /^OUTBOUND_ALLOW must be/ }, bad)
  }
})

t.test('without an allow-list entry nothing on loopback is contacted', async (t) => {
  const peer = await server((_req, res) => res.end('ok'))
  t.teardown(peer.close)
  const client = new OutboundClient({ allow: [] })
  for (const url of [`http://127.0.0.1:${peer.port}/`, `http://localhost:${peer.port}/`, `http://[::ffff:127.0.0.1]:${peer.port}/`, 'http://127.0.0.1/', 'http://localhost/']) {
    await t.rejects(client.request(url), OutboundRefused, url)
  }
  await t.rejects(client.request(`http://user:pw@127.0.0.1:${peer.port}/`, {}), { name: 'OutboundRefused', message: /credentials/ })
  await t.rejects(client.request('ftp://example.com/'), OutboundRefused)
  t.equal(peer.requests.length, 0)
})

t.test('an allowed destination is reached at the checked address, with its own Host header, within the limits', async (t) => {
  const peer = await server((req, res) => {
    if (req.url === '/big') return void res.end(Buffer.alloc(2048, 'x'))
    if (req.url === '/slow') return // never answers
    res.end(JSON.stringify({ host: req.headers.host, method: req.method }))
  })
  t.teardown(peer.close)
  const byName = new OutboundClient({ allow: [parseAllowEntry(`localhost:${peer.port}`)], maxResponseBytes: 1024, timeoutMs: 500 })
  const answer = await byName.request(`http://localhost:${peer.port}/hello`, { method: 'POST', headers: { Host: 'evil.example' }, body: 'x' })
  t.equal(answer.status, 200)
  t.same(JSON.parse(answer.body), { host: `localhost:${peer.port}`, method: 'POST' }, 'the Host header is the URL’s')
  const dest = await byName.check(`http://localhost:${peer.port}/`)
  t.equal(dest.address, '127.0.0.1', 'the connection goes to the address that was checked')
  await t.rejects(byName.request('http://localhost:1/'), OutboundRefused, 'another port of the same name is refused')
  await t.rejects(byName.request(`http://localhost:${peer.port}/big`), { name: 'OutboundFailed', message: /larger than 1024 bytes/ })
  await t.rejects(byName.request(`http://localhost:${peer.port}/slow`), { name: 'OutboundFailed', message: /no answer in 500 ms/ })
  const byRange = new OutboundClient({ allow: [parseAllowEntry('127.0.0.0/8')] })
  t.equal((await byRange.request(`http://127.0.0.1:${peer.port}/`)).status, 200, 'a CIDR entry allows its addresses on any port')
})

t.test('the FCM and APNs senders are held to the same policy', async (t) => {
  const peer = await server((_req, res) => res.end('{}'))
  t.teardown(peer.close)
  const outbound = new OutboundClient({ allow: [] })
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  const fcm = new FcmSender({ projectId: 'p', clientEmail: 'a@p.iam.gserviceaccount.com', privateKey: rsa, tokenUri: `http://127.0.0.1:${peer.port}/token`, endpoint: `http://127.0.0.1:${peer.port}` }, outbound)
  await t.rejects(fcm.send({ kind: 'fcm', id: 1, token: 't' }, { event: 'message' }), OutboundRefused)
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  const apns = new ApnsSender({ key: ec, keyId: 'ABC123DEFG', teamId: 'TEAM123456', topic: 'org.example', endpoint: `https://127.0.0.1:${peer.port}` }, outbound)
  await t.rejects(apns.send({ kind: 'apns', id: 1, token: 'ab', appId: null }, { event: 'message' }), OutboundRefused)
  t.equal(peer.requests.length, 0)
})
