// Flag masks written into SQL as literals, never as parameters. The partial
// indexes on user_message (unread: `("flags" & 1) = 0`, starred, mentioned,
// alert words, direct messages) serve a query only when the planner can see
// that its condition implies the index's, which it cannot with `$n` in place
// of the mask. A prepared statement's generic plan then reads every row the
// user has: POST /register's unread summary cost ~15 ms of node and database
// time for a user with 24,000 read messages instead of under one.
import { Prisma } from './index.js'

/** A flag mask (domain/flags.ts) as an SQL literal. */
export function flagMask(mask: number): Prisma.Sql {
  if (!Number.isSafeInteger(mask) || mask < 0) throw new Error(`flagMask: not a flag mask: ${mask}`)
  return Prisma.raw(String(mask))
}
