// Keeps clients' `is_billing_admin` (derived: queries/billing-admins.ts) true.
// An action whose change can move it — a new can_manage_billing_group, a role
// change (role system groups), membership or subgroup changes, deactivation
// and reactivation — takes a snapshot at the start of its transaction and,
// once its own events are emitted, sends a realm_user update
// `{user_id, is_billing_admin}` for each user whose value flipped to those
// who can access that user (upstream's form for a person field). The events
// leave with the transaction's, after the commit.
import type { Emit } from './context.js'
import type { Realm, Tx } from '../db/index.js'
import { getBillingAdminIds } from '../queries/billing-admins.js'
import { usersAmongWhoCanAccess } from '../presence/audience.js'
import { realmUserUpdateEvent } from '../events/schemas/index.js'

/** Call at the start of the transaction; call the returned function after the change. */
export async function watchBillingAdmins(tx: Tx, ctx: { realm: Pick<Realm, 'id' | 'canAccessAllUsersGroupId'> }, emit: Emit): Promise<() => Promise<void>> {
  const before = await getBillingAdminIds(tx, ctx.realm.id)
  return async () => {
    const after = await getBillingAdminIds(tx, ctx.realm.id)
    const flipped = [...new Set([...before, ...after])].filter((id) => before.has(id) !== after.has(id)).sort((a, b) => a - b)
    if (flipped.length === 0) return
    const active = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true, role: true }, orderBy: { id: 'asc' } })
    for (const id of flipped) {
      emit(realmUserUpdateEvent({ user_id: id, is_billing_admin: after.has(id) }), await usersAmongWhoCanAccess(tx, ctx.realm, id, active))
    }
  }
}
