// The effective configuration with its secrets masked, for `roost config`:
// any field named like a password, secret, token or private key (`privateKey`,
// `key`, `orgKey`; not `keyId` or `publicKey`), any PEM text whatever its
// name, and the password of any URL (DATABASE_URL, REDIS_URL, SMTP_URL…).
// Walks the whole object, so settings added later are covered without
// listing them here.
const SECRET_NAME = /password|secret|token|(^|private|org)key$/i
const PEM = /-----BEGIN [A-Z ]+-----/
export const MASK = '***'

function maskUrl(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value
  try {
    const url = new URL(value)
    if (url.password === '') return value
    url.password = MASK
    return url.toString()
  } catch {
    return value
  }
}

export function maskSecrets(value: unknown, name = ''): unknown {
  if (value === undefined || value === null) return value ?? null
  if (SECRET_NAME.test(name)) return MASK
  if (typeof value === 'string') return PEM.test(value) && /PRIVATE KEY/.test(value) ? MASK : maskUrl(value)
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v))
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, maskSecrets(v, k)]))
  }
  return value
}
