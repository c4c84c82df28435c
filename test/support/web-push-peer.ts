// A Web Push service on loopback for tests: an HTTPS server (a throwaway
// self-signed certificate made with the openssl command) that accepts RFC 8030
// pushes, checks the RFC 8292 VAPID header (an ES256 JWT signed by the key in
// `k`, audience = the endpoint's origin) and decrypts the RFC 8291 aes128gcm
// body with the subscription's private key (ECDH P-256, HKDF-SHA-256,
// AES-128-GCM), so a test sees exactly what a browser would.
// subscribe() makes a browser-side subscription; an endpoint can be told to
// answer an error status (410 Gone for an expired subscription, 500…).
import { execFileSync } from 'node:child_process'
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, randomUUID, verify, type ECDH } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'

export type PeerSubscription = {
  endpoint: string
  p256dh: string
  auth: string
}

export interface ReceivedPush {
  endpoint: string
  ttl: string | undefined
  vapid: { sub: string; aud: string; exp: number; publicKey: string }
  payload: Record<string, unknown>
}

export interface WebPushPeer {
  /** A fresh browser-side subscription on this peer. */
  subscribe(): PeerSubscription
  /** Answers every later push to this endpoint with `status` (and nothing is recorded). */
  failWith(endpoint: string, status: number): void
  /** Answers `endpoint` normally again. */
  recover(endpoint: string): void
  received: ReceivedPush[]
  /** Requests answered, whatever their status. */
  requests: () => number
  /** Resolves once `count` pushes were received in all; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs: number): Promise<void>
  /** The peer's certificate (PEM), for the senders to trust. */
  ca: string
  close(): Promise<void>
}

const b64url = (b: Buffer) => b.toString('base64url')

export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'roost-webpush-'))
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    ], { stdio: 'ignore' })
    return { key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** RFC 8291 §3.4 and RFC 8188: one aes128gcm record decrypted with the user agent's keys. */
export function decryptAes128gcm(body: Buffer, ua: ECDH, authSecret: Buffer): Buffer {
  const salt = body.subarray(0, 16)
  const idlen = body[20]!
  const asPublic = body.subarray(21, 21 + idlen)
  const ciphertext = body.subarray(21 + idlen)
  const ecdhSecret = ua.computeSecret(asPublic)
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), ua.getPublicKey(), asPublic])
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, authSecret, keyInfo, 32))
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16))
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12))
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce)
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16))
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()])
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  if (padded[end] !== 2) throw new Error('aes128gcm: the last record lacks its 0x02 delimiter')
  return padded.subarray(0, end)
}

/** RFC 8292: `vapid t=<JWT>, k=<public key>`, the JWT's ES256 signature checked against k. */
function checkVapid(header: string | undefined): ReceivedPush['vapid'] {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '')
  if (!m) throw new Error(`bad Authorization header: ${header}`)
  const [, jwt, k] = m as unknown as [string, string, string]
  const [head, claims, sig] = jwt.split('.') as [string, string, string]
  const raw = Buffer.from(k, 'base64url')
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64url(raw.subarray(1, 33)), y: b64url(raw.subarray(33, 65)) }, format: 'jwk' })
  if (!verify('sha256', Buffer.from(`${head}.${claims}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(sig, 'base64url'))) throw new Error('VAPID signature does not verify')
  if (JSON.parse(Buffer.from(head, 'base64url').toString()).alg !== 'ES256') throw new Error('VAPID JWT is not ES256')
  const body = JSON.parse(Buffer.from(claims, 'base64url').toString()) as { sub: string; aud: string; exp: number }
  return { ...body, publicKey: k }
}

export async function startWebPushPeer(): Promise<WebPushPeer> {
  const { key, cert } = selfSignedCertificate()
  const subs = new Map<string, { ua: ECDH; auth: Buffer }>()
  const failures = new Map<string, number>()
  const received: ReceivedPush[] = []
  const waiters: { count: number; resolve: () => void }[] = []
  let origin = ''
  let requests = 0
  const server: Server = createServer({ key, cert }, (req, res) => {
    requests++
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const endpoint = `${origin}${req.url}`
      const failure = failures.get(endpoint)
      const sub = subs.get(endpoint)
      try {
        if (failure !== undefined) return void res.writeHead(failure).end()
        if (!sub) return void res.writeHead(404).end()
        if (req.method !== 'POST' || req.headers['content-encoding'] !== 'aes128gcm') throw new Error('not an aes128gcm POST')
        const vapid = checkVapid(req.headers.authorization)
        if (vapid.aud !== origin) throw new Error(`VAPID audience ${vapid.aud} is not ${origin}`)
        const payload = JSON.parse(decryptAes128gcm(Buffer.concat(chunks), sub.ua, sub.auth).toString('utf8')) as Record<string, unknown>
        received.push({ endpoint, ttl: req.headers.ttl as string | undefined, vapid, payload })
        for (const w of waiters.filter((w) => received.length >= w.count)) w.resolve()
        res.writeHead(201, { location: `${endpoint}/msg/${randomUUID()}` }).end()
      } catch (error) {
        res.writeHead(400).end(error instanceof Error ? error.message : String(error))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    subscribe() {
      const ua = createECDH('prime256v1')
      ua.generateKeys()
      const auth = randomBytes(16)
      const endpoint = `${origin}/push/${randomUUID()}`
      subs.set(endpoint, { ua, auth })
      return { endpoint, p256dh: b64url(ua.getPublicKey()), auth: b64url(auth) }
    },
    failWith(endpoint, status) {
      failures.set(endpoint, status)
    },
    recover(endpoint) {
      failures.delete(endpoint)
    },
    received,
    requests: () => requests,
    waitFor(count, timeoutMs) {
      if (received.length >= count) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${received.length} of ${count} pushes after ${timeoutMs} ms`)), timeoutMs)
        waiters.push({ count, resolve: () => { clearTimeout(timer); resolve() } })
      })
    },
    ca: cert,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections() }),
  }
}
