// FCM HTTP v1 and Google's OAuth2 token endpoint on loopback for tests (HTTPS,
// a throwaway certificate). It writes a service-account key file whose
// token_uri points at itself, checks the JWT-bearer grant (RS256 signature
// against the account's public key, iss, scope, aud) and each
// messages:send request (the Bearer token it issued, the project, a
// `message` with a token and string-only `data`), as Google documents them.
// Tokens starting "gone-" are answered 404 UNREGISTERED, "fail-" 500.
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto'
import { jwtVerify } from 'jose'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { selfSignedCertificate } from './web-push-peer.js'

export interface FcmMessage {
  token: string
  data: Record<string, string>
  android?: { priority?: string }
}

export interface FcmPeer {
  origin: string
  projectId: string
  /** The service-account JSON key file (for FCM_SERVICE_ACCOUNT_FILE). */
  serviceAccountFile: string
  tokensIssued: number
  /** The service account's public key, which verifies the assertions. */
  publicKey: KeyObject
  /** Every JWT-bearer assertion the token endpoint received, in order. */
  assertions: string[]
  received: FcmMessage[]
  /** The peer's certificate (PEM), for the sender to trust. */
  ca: string
  close(): Promise<void>
}

const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging'

export async function startFcmPeer(): Promise<FcmPeer> {
  const { key, cert } = selfSignedCertificate()
  const account = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const projectId = `roost-test-${randomUUID().slice(0, 8)}`
  const clientEmail = `roost@${projectId}.iam.gserviceaccount.com`
  const issued = new Set<string>()
  const peer: FcmPeer = {
    origin: '',
    projectId,
    serviceAccountFile: '',
    tokensIssued: 0,
    publicKey: account.publicKey,
    assertions: [],
    received: [],
    ca: cert,
    close: async () => undefined,
  }
  const fail = (res: import('node:http').ServerResponse, status: number, message: string, errorCode?: string) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: status, message, ...(errorCode ? { details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode }] } : {}) } }))
  const server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8')
      if (req.method === 'POST' && req.url === '/token') {
        const form = new URLSearchParams(body)
        if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return fail(res, 400, 'not a form')
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return fail(res, 400, 'unsupported_grant_type')
        peer.assertions.push(form.get('assertion') ?? '')
        // The assertion is checked with jose against the service account's public key.
        let verified: Awaited<ReturnType<typeof jwtVerify>>
        try {
          verified = await jwtVerify(form.get('assertion') ?? '', account.publicKey, { algorithms: ['RS256'], issuer: clientEmail, audience: `${peer.origin}/token`, requiredClaims: ['iat', 'exp'] })
        } catch (error) {
          return fail(res, 400, `invalid_grant: ${(error as Error).message}`)
        }
        const { payload: c, protectedHeader: h } = verified
        if (h.typ !== 'JWT' || c.scope !== FCM_SCOPE || (c.exp as number) - (c.iat as number) > 3600) {
          return fail(res, 400, `invalid_grant: ${JSON.stringify({ h, c })}`)
        }
        const token = `ya29.${randomUUID()}`
        issued.add(token)
        peer.tokensIssued++
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: 'Bearer' }))
      }
      if (req.method === 'POST' && req.url === `/v1/projects/${projectId}/messages:send`) {
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
        if (!bearer || !issued.has(bearer)) return fail(res, 401, 'Request had invalid authentication credentials.', undefined)
        const { message } = JSON.parse(body) as { message: FcmMessage }
        if (!message?.token || typeof message.data !== 'object' || Object.values(message.data).some((v) => typeof v !== 'string')) return fail(res, 400, 'bad message', 'INVALID_ARGUMENT')
        if (message.token.startsWith('gone-')) return fail(res, 404, 'Requested entity was not found.', 'UNREGISTERED')
        if (message.token.startsWith('fail-')) return fail(res, 500, 'Internal error', 'INTERNAL')
        peer.received.push(message)
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: `projects/${projectId}/messages/${randomUUID()}` }))
      }
      fail(res, 404, 'not found')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  peer.origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  const dir = mkdtempSync(path.join(tmpdir(), 'roost-fcm-'))
  peer.serviceAccountFile = path.join(dir, 'service-account.json')
  writeFileSync(peer.serviceAccountFile, JSON.stringify({
    type: 'service_account',
    project_id: projectId,
    private_key_id: randomUUID(),
    private_key: account.privateKey.export({ type: 'pkcs8', format: 'pem' }),
    client_email: clientEmail,
    token_uri: `${peer.origin}/token`,
  }))
  peer.close = () =>
    new Promise<void>((resolve) => {
      rmSync(dir, { recursive: true, force: true })
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return peer
}
