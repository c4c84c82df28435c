// Case-insensitive exact lookups: `lower(column) = lower(value)`, one
// statement for any number of values. Never a LIKE/ILIKE pattern (Prisma's
// `mode: 'insensitive'` is ILIKE, where `_` and `%` in a user's input are
// wildcards: `b____@example.com` would name bob@example.com). The lower()
// indexes of the init migration serve the user and channel lookups.
import { Prisma } from './generated/client.js'
import type { PrismaClient, Tx } from './index.js'

/** The columns looked up this way, and the integer columns that scope them. */
const TARGETS = {
  user_email: { table: 'user_profile', column: 'email', scope: ['realm_id'] },
  user_delivery_email: { table: 'user_profile', column: 'delivery_email', scope: ['realm_id'] },
  stream_name: { table: 'stream', column: 'name', scope: ['realm_id'] },
  custom_profile_field_name: { table: 'custom_profile_field', column: 'name', scope: ['realm_id'] },
  user_group_name: { table: 'user_group', column: 'name', scope: ['realm_id'] },
  invitation_email: { table: 'invitation', column: 'email', scope: ['realm_id'] },
  user_topic_name: { table: 'user_topic', column: 'topic_name', scope: ['stream_id'] },
  alert_word: { table: 'alert_word', column: 'word', scope: ['user_id'] },
} as const

export type LowerMatchTarget = keyof typeof TARGETS
type Db = Pick<PrismaClient, '$queryRaw'> | Tx

/**
 * IDs of the rows (of `target`, within `scope`) whose column equals one of
 * `values` case-insensitively, with the lower-cased value each matched.
 */
export async function idsMatchingLower(
  db: Db,
  target: LowerMatchTarget,
  scope: Partial<Record<'realm_id' | 'stream_id' | 'user_id', number>>,
  values: readonly string[],
): Promise<{ id: number; key: string }[]> {
  if (values.length === 0) return []
  const { table, column, scope: scopeColumns } = TARGETS[target]
  const conditions = scopeColumns.map((name) => {
    const value = scope[name]
    if (value === undefined) throw new Error(`idsMatchingLower(${target}) needs ${name}`)
    return Prisma.sql`${Prisma.raw(`"${name}"`)} = ${value}`
  })
  const lowered = [...new Set(values.map((v) => v.toLowerCase()))]
  return db.$queryRaw<{ id: number; key: string }[]>(Prisma.sql`
    SELECT id, lower(${Prisma.raw(`"${column}"`)}) AS key FROM ${Prisma.raw(`"${table}"`)}
    WHERE ${Prisma.join(conditions, ' AND ')} AND lower(${Prisma.raw(`"${column}"`)}) = ANY(SELECT lower(v) FROM unnest(${lowered}::text[]) AS v)`)
}

/** The ID of the row whose column equals `value` case-insensitively (the lowest when several do), or undefined. */
export async function idMatchingLower(
  db: Db,
  target: LowerMatchTarget,
  scope: Partial<Record<'realm_id' | 'stream_id' | 'user_id', number>>,
  value: string,
): Promise<number | undefined> {
  const rows = await idsMatchingLower(db, target, scope, [value])
  return rows.length === 0 ? undefined : Math.min(...rows.map((r) => r.id))
}

/** `s` as a LIKE pattern that matches only itself (`\` is PostgreSQL's default LIKE escape). */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}
