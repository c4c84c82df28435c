// Passwords and API keys: the minimum length of a password, its argon2id hash
// and check (CPU work, no I/O), and random keys over [A-Za-z0-9].
import { randomBytes } from 'node:crypto'
import argon2 from 'argon2'

export const PASSWORD_MIN_LENGTH = 6
/** Upstream's PASSWORD_MAX_LENGTH (register's password_max_length, level 338). */
export const PASSWORD_MAX_LENGTH = 100

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** A random string over [A-Za-z0-9] (API keys are 32 characters). */
export function randomAlphanumeric(length = 32): string {
  const bytes = randomBytes(length * 2)
  let out = ''
  for (const byte of bytes) {
    if (byte >= 248) continue // keep the distribution uniform (248 = 62 * 4)
    out += KEY_ALPHABET[byte % 62]
    if (out.length === length) return out
  }
  return out + randomAlphanumeric(length - out.length)
}

/**
 * argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane): about
 * 0.07 s of one core per hash here, against 0.5 s over four lanes with the
 * library's defaults (64 MiB, 3 passes, 4 lanes), so that logins cannot buy
 * much CPU per request. A hash records its own parameters, so hashes made with
 * other parameters still verify.
 */
const HASH_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

export const hashPassword = (password: string): Promise<string> => argon2.hash(password, HASH_OPTIONS)

export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  if (!hash) return false
  try {
    return await argon2.verify(hash, password)
  } catch {
    return false
  }
}
