// Members created in bulk for the capacity benchmarks (presence-ping.ts,
// user-create-queues.ts): set-based inserts through Prisma, run before any
// node has served a request for them (so no node caches an older state).
// Each user has a known API key, its settings row and its role group row.
import { randomBytes } from 'node:crypto'
import { openDatabase } from '../src/db/client.js'
import { applyMigrations } from '../src/db/migrate.js'
import { ROLE } from '../src/domain/roles.js'
import { roleGroupName } from '../src/domain/system-groups.js'

export interface BulkUser {
  id: number
  email: string
  /** Basic authorization header value. */
  auth: string
}

export async function createBulkUsers(databaseUrl: string, n: number, prefix = 'bulk'): Promise<BulkUser[]> {
  const database = await openDatabase({ databaseUrl })
  await applyMigrations(database)
  const { prisma } = database
  try {
    const realm = await prisma.realm.findFirstOrThrow({ orderBy: { id: 'asc' } })
    const memberGroup = await prisma.userGroup.findUniqueOrThrow({ where: { realmId_name: { realmId: realm.id, name: roleGroupName(ROLE.MEMBER) } } })
    const data = Array.from({ length: n }, (_, i) => {
      const email = `${prefix}-${i}@example.com`
      return { realmId: realm.id, email, deliveryEmail: email, fullName: `${prefix} ${i}`, apiKey: randomBytes(16).toString('hex'), role: ROLE.MEMBER, dateJoined: new Date() }
    })
    const rows = await insertInSlices(data, (slice) => prisma.user.createManyAndReturn({ data: slice, select: { id: true, email: true, apiKey: true } }))
    await insertInSlices(rows, (slice) => prisma.userSettings.createMany({ data: slice.map((u) => ({ userId: u.id })) }))
    await insertInSlices(rows, (slice) => prisma.userGroupMember.createMany({ data: slice.map((u) => ({ groupId: memberGroup.id, userId: u.id })) }))
    return rows.map((u) => ({ id: u.id, email: u.email, auth: `Basic ${Buffer.from(`${u.email}:${u.apiKey}`).toString('base64')}` }))
  } finally {
    await database.close()
  }
}

/** Rows per bulk insert: a user_settings row binds some 60 parameters, and PostgreSQL takes at most 32,767 per statement. */
export const BULK_INSERT_ROWS = 400

/**
 * Inserts `rows` in slices of BULK_INSERT_ROWS, one statement after another.
 * Prisma splits a createMany past the parameter limit into several
 * statements that it sends at once on its one connection, which pg 8
 * accepts with a deprecation warning (and pg 9 will refuse).
 */
export async function insertInSlices<T, R>(rows: readonly T[], insert: (slice: T[]) => Promise<R[] | { count: number }>): Promise<R[]> {
  const out: R[] = []
  for (let start = 0; start < rows.length; start += BULK_INSERT_ROWS) {
    const inserted = await insert(rows.slice(start, start + BULK_INSERT_ROWS))
    if (Array.isArray(inserted)) out.push(...inserted)
  }
  return out
}

/** Runs `fn` over `items` with at most `width` calls in flight. */
export async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T)
    }),
  )
}
