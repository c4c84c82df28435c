// The per-user caps on push targets (Web Push subscriptions, mobile push
// tokens) count and insert under a lock on the user's row, so that
// concurrent registrations cannot pass the cap together.
import type { Tx } from '../db/index.js'

export async function lockUserForCap(tx: Tx, userId: number): Promise<void> {
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ${userId} FOR UPDATE`
}
