// Lookups made on every request, as single raw statements: Prisma's ORM path
// costs about three times a raw query here (measured: realm by subdomain
// 1.9 ms vs 0.7 ms on PostgreSQL). Rows come back in Prisma's own shapes.
import { fastRead } from './fast-read.js'
import type { PrismaClient, Realm, User } from './index.js'

/** Column names are few (the schema's): each conversion is computed once per process. */
const camelNames = new Map<string, string>()
const camel = (column: string): string => {
  let name = camelNames.get(column)
  if (name === undefined) {
    name = column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
    if (camelNames.size < 10_000) camelNames.set(column, name)
  }
  return name
}

/** Turns a raw row's snake_case columns into the model's camelCase fields (the schema @maps one to the other). */
export function toModel<T>(row: Record<string, unknown>, prefix = ''): T {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) {
    if (prefix && !key.startsWith(prefix)) continue
    out[camel(prefix ? key.slice(prefix.length) : key)] = value
  }
  return out as T
}

export async function findRealmByStringId(prisma: PrismaClient, stringId: string): Promise<Realm | null> {
  const rows = await prisma.$queryRaw<Record<string, unknown>[]>`SELECT * FROM realm WHERE string_id = ${stringId}`
  return rows[0] ? toModel<Realm>(rows[0]) : null
}

/**
 * The user holding an API key, with their realm and whether they share their
 * presence (one statement, prepared once per pooled connection). The setting
 * rides along because every presence ping asks for it: the authentication
 * cache then answers it too (auth-cache.ts), and a change to it evicts the
 * user like a change to the user's own row (migration
 * *_presence_enabled_invalidation, row-writes.ts). A user without a
 * settings row shares presence, as the setting's default says.
 */
export async function findUserWithRealmByApiKey(prisma: PrismaClient, apiKey: string): Promise<{ user: User; realm: Realm; presenceEnabled: boolean } | null> {
  const rows = await fastRead<{ u: Record<string, unknown>; r: Record<string, unknown>; presence_enabled: boolean | null }>(
    prisma,
    'auth_user_with_realm',
    `SELECT to_jsonb(u) AS u, to_jsonb(r) AS r,
            (SELECT s.presence_enabled FROM user_settings s WHERE s.user_id = u.id) AS presence_enabled
     FROM user_profile u JOIN realm r ON r.id = u.realm_id
     WHERE u.api_key = $1`,
    [apiKey],
  )
  const row = rows[0]
  if (!row) return null
  return { user: fromJson<User>(row.u, USER_DATES), realm: fromJson<Realm>(row.r, REALM_DATES), presenceEnabled: row.presence_enabled !== false }
}

export const USER_DATES = ['dateJoined', 'lastLogin']
export const REALM_DATES = ['dateCreated']

/** A to_jsonb() row as the model: camelCase keys, the named timestamp fields as Dates. */
export function fromJson<T>(json: Record<string, unknown>, dateFields: string[]): T {
  const model = toModel<Record<string, unknown>>(json)
  for (const field of dateFields) {
    const value = model[field]
    if (typeof value === 'string') model[field] = new Date(value)
  }
  return model as T
}
