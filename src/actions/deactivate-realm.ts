// Deactivating and reactivating an organization, as upstream's
// do_deactivate_realm and do_reactivate_realm (management commands
// deactivate_realm / reactivate_realm; there is no endpoint). Deactivation
// ends every browser session of the organization and tells its active users
// (`realm` `deactivated`, which releases their held long-polls); from then on
// every API key and login of the organization is refused with
// REALM_DEACTIVATED (http/auth.ts). Reactivation sends no event, as upstream.
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import { isOwner } from '../domain/roles.js'
import { mustBeOwner, realmAlreadyActive, realmAlreadyDeactivated } from '../errors.js'
import { realmDeactivatedEvent } from '../events/schemas/index.js'

export async function deactivateRealm(ctx: ActionContext): Promise<void> {
  if (!isOwner(ctx.user.role)) throw mustBeOwner()
  await inTransaction(ctx, async (tx, emit) => {
    const changed = await tx.realm.updateMany({ where: { id: ctx.realm.id, deactivated: false }, data: { deactivated: true } })
    if (changed.count === 0) throw realmAlreadyDeactivated()
    await tx.webSession.deleteMany({ where: { user: { realmId: ctx.realm.id } } })
    const users = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true }, orderBy: { id: 'asc' } })
    emit(realmDeactivatedEvent(ctx.realm.id), users.map((u) => u.id))
  })
}

export async function reactivateRealm(ctx: ActionContext): Promise<void> {
  if (!isOwner(ctx.user.role)) throw mustBeOwner()
  const changed = await ctx.prisma.realm.updateMany({ where: { id: ctx.realm.id, deactivated: true }, data: { deactivated: false } })
  if (changed.count === 0) throw realmAlreadyActive()
}
