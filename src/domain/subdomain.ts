// Organization subdomains (upstream check_subdomain_available): 3–40
// lowercase letters, digits and hyphens, no hyphen at either end, and not a
// name reserved for the service's own hosts or pages (nor its plural).
import { badRequest } from '../errors.js'

export const MIN_SUBDOMAIN_LENGTH = 3
export const MAX_SUBDOMAIN_LENGTH = 40

const RESERVED_SUBDOMAINS = new Set([
  'about', 'abuse', 'account', 'admin', 'administrator', 'api', 'app', 'assets', 'auth', 'authentication',
  'beta', 'billing', 'blog', 'bot', 'cache', 'cdn', 'channel', 'chat', 'client', 'cname', 'community',
  'contact', 'dashboard', 'data', 'demo', 'dev', 'docs', 'download', 'email', 'example', 'files', 'ftp',
  'help', 'home', 'imap', 'img', 'invite', 'join', 'localhost', 'login', 'mail', 'manage', 'media',
  'metrics', 'mx', 'ns', 'organization', 'pop', 'postmaster', 'prod', 'production', 'realm', 'redis',
  'register', 'roost', 'root', 'secure', 'security', 'server', 'signin', 'signup', 'smtp', 'ssl',
  'staging', 'static', 'status', 'stream', 'subdomain', 'support', 'system', 'test', 'testing', 'topic',
  'upload', 'uploads', 'user', 'user-uploads', 'web', 'webmail', 'webmaster', 'www',
])

export function isReservedSubdomain(subdomain: string): boolean {
  return RESERVED_SUBDOMAINS.has(subdomain) || (subdomain.endsWith('s') && RESERVED_SUBDOMAINS.has(subdomain.slice(0, -1)))
}

/** Throws the upstream message for a subdomain no organization may have (availability is checked against the database separately). */
export function checkSubdomain(subdomain: string): void {
  if (subdomain.length < MIN_SUBDOMAIN_LENGTH) throw badRequest(`Subdomain needs to have length ${MIN_SUBDOMAIN_LENGTH} or greater.`)
  if (subdomain.length > MAX_SUBDOMAIN_LENGTH) throw badRequest(`Subdomain can have at most ${MAX_SUBDOMAIN_LENGTH} characters.`)
  if (subdomain.startsWith('-') || subdomain.endsWith('-')) throw badRequest("Subdomain cannot start or end with a '-'.")
  if (!/^[a-z0-9-]+$/.test(subdomain)) throw badRequest("Subdomain can only have lowercase letters, numbers, and '-'s.")
  if (isReservedSubdomain(subdomain)) throw badRequest('Subdomain reserved. Please choose a different one.')
}
