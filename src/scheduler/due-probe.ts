// Whether a worker loop (scheduled messages, missed-message emails, push
// notifications) has anything due, in one statement outside any transaction.
// The loops tick every 100 ms to 1 s on every node; a claim is a Prisma
// interactive transaction (BEGIN, the locking read, COMMIT), which kept an
// idle node busy (bench/README.md, issue 16). The probe is a named prepared
// statement (db/fast-read.ts); only when it finds a due row does the loop
// open its claim transaction. It ignores row locks, so a row another node is
// claiming reads as due and the claim then finds nothing, as before.
import { fastRead } from '../db/fast-read.js'
import type { PrismaClient } from '../db/index.js'

/**
 * What "due" means for each table: the WHERE clause of its claim without the
 * lock (the claims in scheduler/delivery.ts, notifications/delivery.ts and
 * notifications/push-delivery.ts), with $1 the claim's `now`.
 */
const DUE_AND_NOT_LEASED = 'due_at <= $1::timestamptz AND (claim_expires_at IS NULL OR claim_expires_at <= $1::timestamptz)'
const DUE = {
  scheduled_message: 'NOT delivered AND NOT failed AND scheduled_timestamp <= $1::timestamptz',
  missed_message_email: DUE_AND_NOT_LEASED,
  missed_push_notification: DUE_AND_NOT_LEASED,
} as const

export type DueTable = keyof typeof DUE

/** Whether `table` holds a row due at `now`; with `realmIds`, only rows of those realms (tests sharing a database). */
export async function anyDue(prisma: PrismaClient, table: DueTable, now: Date, realmIds?: readonly number[]): Promise<boolean> {
  const [row] = await fastRead<{ due: boolean }>(
    prisma,
    `due_${table}`,
    `SELECT EXISTS (SELECT 1 FROM ${table} WHERE ${DUE[table]}
       AND ($2 = '' OR realm_id = ANY(string_to_array($2, ',')::int[]))) AS due`,
    [now.toISOString(), realmIds === undefined ? '' : realmIds.join(',')],
  )
  return row?.due === true
}
