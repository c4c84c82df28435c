// APNs on loopback for tests: an HTTP/2 server over TLS (a throwaway
// certificate) that checks each `POST /3/device/{token}` as Apple documents
// token-based requests: `authorization: bearer <ES256 JWT>` with the kid and
// iss of the test's signing key (verified against its public key), an
// apns-topic and apns-push-type, a JSON body with `aps`. It also writes the
// .p8 signing key for APNS_KEY_FILE. Tokens starting "dead" are answered 410
// Unregistered, "bad0" 400 BadDeviceToken, "fa11" 500.
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { jwtVerify } from 'jose'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createSecureServer, constants as h2 } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { selfSignedCertificate } from './web-push-peer.js'

export interface ApnsRequest {
  token: string
  topic: string
  pushType: string
  body: { aps: Record<string, unknown>; zulip: Record<string, unknown> }
}

export interface ApnsPeer {
  origin: string
  ca: string
  keyFile: string
  keyId: string
  teamId: string
  /** The public half of the .p8 key, which verifies the provider tokens. */
  publicKey: KeyObject
  /** The provider token (JWT) of every request, in order. */
  providerTokens: string[]
  received: ApnsRequest[]
  close(): Promise<void>
}

export async function startApnsPeer(): Promise<ApnsPeer> {
  const { key, cert } = selfSignedCertificate()
  const signing = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const keyId = 'ABC123DEFG'
  const teamId = 'TEAM123456'
  const dir = mkdtempSync(path.join(tmpdir(), 'roost-apns-'))
  const keyFile = path.join(dir, `AuthKey_${keyId}.p8`)
  writeFileSync(keyFile, signing.privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const received: ApnsRequest[] = []
  const providerTokens: string[] = []
  const server = createSecureServer({ key, cert })
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = []
    stream.on('data', (c: Buffer) => chunks.push(c))
    stream.on('end', async () => {
      const answer = (status: number, reason?: string) => {
        stream.respond({ [h2.HTTP2_HEADER_STATUS]: status, 'apns-id': 'test', 'content-type': 'application/json' })
        stream.end(reason ? JSON.stringify({ reason }) : '')
      }
      const token = /^\/3\/device\/([0-9a-f]+)$/.exec(String(headers[h2.HTTP2_HEADER_PATH]))?.[1]
      if (headers[h2.HTTP2_HEADER_METHOD] !== 'POST' || !token) return answer(405, 'MethodNotAllowed')
      const jwt = /^bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1]
      if (!jwt) return answer(403, 'MissingProviderToken')
      providerTokens.push(jwt)
      // The provider token is checked with jose against the .p8 key's public half.
      try {
        const { payload: c, protectedHeader: h } = await jwtVerify(jwt, signing.publicKey, { algorithms: ['ES256'], issuer: teamId, requiredClaims: ['iat'] })
        if (h.kid !== keyId || typeof c.iat !== 'number') return answer(403, 'InvalidProviderToken')
      } catch {
        return answer(403, 'InvalidProviderToken')
      }
      const topic = String(headers['apns-topic'] ?? '')
      if (!topic) return answer(400, 'MissingTopic')
      let body: ApnsRequest['body']
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ApnsRequest['body']
      } catch {
        return answer(400, 'PayloadEmpty')
      }
      if (typeof body.aps !== 'object') return answer(400, 'PayloadEmpty')
      if (token.startsWith('dead')) return answer(410, 'Unregistered')
      if (token.startsWith('bad0')) return answer(400, 'BadDeviceToken')
      if (token.startsWith('fa11')) return answer(500, 'InternalServerError')
      received.push({ token, topic, pushType: String(headers['apns-push-type'] ?? ''), body })
      answer(200)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca: cert,
    keyFile,
    keyId,
    teamId,
    publicKey: signing.publicKey,
    providerTokens,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        rmSync(dir, { recursive: true, force: true })
        server.close(() => resolve())
      }),
  }
}
