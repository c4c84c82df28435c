// Realm selection by Host, and HTTP Basic authentication (email + API key).
import type { FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { Realm, User } from '../db/index.js'
import type { Services } from '../services.js'
import {
  accountDeactivatedAuth,
  basicAuthRequired,
  invalidApiKey,
  invalidAuthHeader,
  invalidSubdomain,
  malformedApiKey,
  notLoggedIn,
  realmDeactivatedAuth,
  wrongSubdomain,
} from '../errors.js'

/** Of a route (route.ts). user: Basic auth required; optional: Basic auth when sent; none: no auth, the Host must name a realm; public: no auth, any Host. */
export type AuthMode = 'user' | 'none' | 'optional' | 'public'

let rootHost: { url: string; host: string } | undefined

/** EXTERNAL_URL's host, lowercased (parsed once: every request asks). */
function rootHostOf(externalUrl: string): string {
  if (rootHost?.url !== externalUrl) rootHost = { url: externalUrl, host: new URL(externalUrl).hostname.toLowerCase() }
  return rootHost.host
}

/** The last Host header's answer: a node's clients name one or a few hosts, and every request asks. */
let lastSubdomain: { hostHeader: string | undefined; externalUrl: string; subdomain: string } | undefined

/** The subdomain a Host header names: '' for the bare host (or any host that is not ours). */
export function subdomainOf(hostHeader: string | undefined, externalUrl: string): string {
  const last = lastSubdomain
  if (last !== undefined && last.hostHeader === hostHeader && last.externalUrl === externalUrl) return last.subdomain
  const subdomain = parseSubdomain(hostHeader, externalUrl)
  lastSubdomain = { hostHeader, externalUrl, subdomain }
  return subdomain
}

function parseSubdomain(hostHeader: string | undefined, externalUrl: string): string {
  const host = (hostHeader ?? '').toLowerCase().replace(/:\d+$/, '')
  const root = rootHostOf(externalUrl)
  if (host === root || !host.endsWith(`.${root}`)) return ''
  const sub = host.slice(0, -(root.length + 1))
  return sub === 'www' ? '' : sub
}

export async function realmForRequest(services: Services, request: FastifyRequest): Promise<Realm | null> {
  const stringId = subdomainOf(request.headers.host, services.config.externalUrl)
  return services.authCache.realmByStringId(stringId)
}

export async function requireRealm(services: Services, request: FastifyRequest): Promise<Realm> {
  const realm = await realmForRequest(services, request)
  if (!realm) throw invalidSubdomain()
  return realm
}

export interface BasicCredentials {
  username: string
  password: string
  /** The username as compared with the account's email: trimmed, lowercased. */
  login: string
}

/**
 * Parsed Authorization headers of successful authentications, by header:
 * clients send the same one on every request. Only headers that
 * authenticated are kept, so junk headers cost no memory; bounded in bytes.
 */
const authenticatedHeaders = new LRUCache<string, BasicCredentials>({
  maxSize: 4 * 1024 * 1024,
  sizeCalculation: (credentials, header) => 2 * (header.length + credentials.username.length + credentials.password.length) + 200,
})

/** Headers remembered (tests and metrics). */
export function authenticatedHeaderCount(): number {
  return authenticatedHeaders.size
}

export function parseBasicAuth(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined
  const known = authenticatedHeaders.get(header)
  if (known) return known
  const [scheme, encoded] = header.trim().split(/\s+/, 2)
  if (scheme?.toLowerCase() !== 'basic') throw basicAuthRequired()
  if (!encoded) throw invalidAuthHeader()
  const decoded = Buffer.from(encoded, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) throw invalidAuthHeader()
  const username = decoded.slice(0, colon)
  return Object.freeze({ username, password: decoded.slice(colon + 1), login: username.trim().toLowerCase() })
}

/** Compares two secrets in time that depends only on their length. */
export function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

const API_KEY_PATTERN = /^[A-Za-z0-9]{32}$/

export interface Authenticated {
  realm: Realm
  user: User
}

/**
 * Authenticates the request's Basic credentials; throws the 401 envelopes
 * upstream sends. When the authentication cache holds the key (and the Host
 * names its realm) the answer comes without a promise.
 */
export function authenticate(services: Services, request: FastifyRequest): Authenticated | Promise<Authenticated> {
  const credentials = parseBasicAuth(request.headers.authorization)
  if (!credentials) throw notLoggedIn()
  if (!API_KEY_PATTERN.test(credentials.password)) throw malformedApiKey()
  // Cached lookup (db/auth-cache.ts); every check below runs on every request.
  const cached = services.authCache.cachedUserWithRealm(credentials.password)
  if (cached !== undefined) return checkAccount(services, request, credentials, cached)
  return services.authCache.userWithRealmByApiKey(credentials.password).then((row) => checkAccount(services, request, credentials, row))
}

function checkAccount(services: Services, request: FastifyRequest, credentials: BasicCredentials, row: Authenticated | null): Authenticated | Promise<Authenticated> {
  const { login, password: apiKey } = credentials
  if (!row || !sameSecret(row.user.apiKey, apiKey) || row.user.deliveryEmail.toLowerCase() !== login) {
    throw invalidApiKey()
  }
  const { realm, user } = row
  if (realm.deactivated) throw realmDeactivatedAuth()
  if (!user.isActive) throw accountDeactivatedAuth()
  const header = request.headers.authorization
  const subdomain = subdomainOf(request.headers.host, services.config.externalUrl)
  if (realm.stringId === subdomain) return rememberHeader(header, credentials, row)
  // The bare host also serves the only realm of a single-realm server.
  if (subdomain !== '') throw wrongSubdomain()
  return services.authCache.realmByStringId(subdomain).then((root) => {
    if (root) throw wrongSubdomain()
    return rememberHeader(header, credentials, row)
  })
}

function rememberHeader(header: string | undefined, credentials: BasicCredentials, row: Authenticated): Authenticated {
  if (header !== undefined && !authenticatedHeaders.has(header)) authenticatedHeaders.set(header, credentials)
  return { realm: row.realm, user: row.user }
}
