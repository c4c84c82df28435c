// Realm linkifiers (upstream zerver/views/realm_linkifiers.py and
// zerver/actions/realm_linkifiers.py): administrators add, change, remove
// and reorder them; each change sends every active user the whole list in a
// `realm_linkifiers` event (and the legacy, always empty, `realm_filters`).
import { realmFiltersEvent, realmLinkifiersEvent } from '../events/schemas/index.js'
import type { Realm, Tx } from '../db/index.js'
import type { ActionContext, Emit } from './context.js'
import { inTransaction } from './context.js'
import { mustBeAdmin, linkifierInvalid, linkifierNotFound, linkifierOrderDuplicates, linkifierOrderIncomplete, tooManyLinkifiers } from '../errors.js'
import { isAdmin } from '../domain/roles.js'
import { LinkifierProblem, MAX_LINKIFIERS_PER_REALM, validateLinkifier, type Linkifier } from '../domain/linkifiers.js'

export interface LinkifierObject {
  id: number
  pattern: string
  url_template: string
}

/** The realm's linkifiers in the order clients must apply them. */
export async function getLinkifiers(db: Pick<Tx, 'realmLinkifier'>, realmId: number): Promise<LinkifierObject[]> {
  const rows = await db.realmLinkifier.findMany({ where: { realmId }, orderBy: [{ order: 'asc' }, { id: 'asc' }] })
  return rows.map((l) => ({ id: l.id, pattern: l.pattern, url_template: l.urlTemplate }))
}

async function emitLinkifiers(tx: Tx, emit: Emit, realm: Realm): Promise<void> {
  const users = (await tx.user.findMany({ where: { realmId: realm.id, isActive: true }, select: { id: true } })).map((u) => u.id)
  emit(realmLinkifiersEvent(await getLinkifiers(tx, realm.id)), users)
  emit(realmFiltersEvent(), users)
}

function checkLinkifier(linkifier: Linkifier): void {
  try {
    validateLinkifier(linkifier)
  } catch (error) {
    if (error instanceof LinkifierProblem) throw linkifierInvalid(error.field, error.message)
    throw error
  }
}

const duplicatePattern = () => linkifierInvalid('__all__', 'Realm filter with this Realm and Pattern already exists.')

function requireAdmin(ctx: ActionContext): void {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
}

export async function addLinkifier(ctx: ActionContext, linkifier: Linkifier): Promise<number> {
  requireAdmin(ctx)
  checkLinkifier(linkifier)
  return inTransaction(ctx, async (tx, emit) => {
    if ((await tx.realmLinkifier.count({ where: { realmId: ctx.realm.id } })) >= MAX_LINKIFIERS_PER_REALM) throw tooManyLinkifiers(MAX_LINKIFIERS_PER_REALM)
    const rows = await tx.$queryRaw<{ id: number }[]>`
      INSERT INTO realm_linkifier (realm_id, pattern, url_template, "order")
      SELECT ${ctx.realm.id}, ${linkifier.pattern}, ${linkifier.urlTemplate}, COALESCE(MAX("order") + 1, 0)
      FROM realm_linkifier WHERE realm_id = ${ctx.realm.id}
      ON CONFLICT (realm_id, pattern) DO NOTHING
      RETURNING id`
    const id = rows[0]?.id
    if (id === undefined) throw duplicatePattern()
    await emitLinkifiers(tx, emit, ctx.realm)
    return id
  })
}

export async function updateLinkifier(ctx: ActionContext, id: number, linkifier: Linkifier): Promise<void> {
  requireAdmin(ctx)
  await inTransaction(ctx, async (tx, emit) => {
    const existing = await tx.realmLinkifier.findFirst({ where: { id, realmId: ctx.realm.id } })
    if (!existing) throw linkifierNotFound()
    checkLinkifier(linkifier)
    const clash = await tx.realmLinkifier.findFirst({ where: { realmId: ctx.realm.id, pattern: linkifier.pattern, id: { not: id } }, select: { id: true } })
    if (clash) throw duplicatePattern()
    await tx.realmLinkifier.update({ where: { id }, data: { pattern: linkifier.pattern, urlTemplate: linkifier.urlTemplate } })
    await emitLinkifiers(tx, emit, ctx.realm)
  })
}

export async function removeLinkifier(ctx: ActionContext, id: number): Promise<void> {
  requireAdmin(ctx)
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.realmLinkifier.deleteMany({ where: { id, realmId: ctx.realm.id } })
    if (count === 0) throw linkifierNotFound()
    await emitLinkifiers(tx, emit, ctx.realm)
  })
}

/** PATCH /realm/linkifiers: the new order must list every linkifier exactly once. */
export async function reorderLinkifiers(ctx: ActionContext, orderedIds: number[]): Promise<void> {
  requireAdmin(ctx)
  if (new Set(orderedIds).size < orderedIds.length) throw linkifierOrderDuplicates()
  await inTransaction(ctx, async (tx, emit) => {
    const existing = await tx.realmLinkifier.findMany({ where: { realmId: ctx.realm.id }, select: { id: true } })
    const wanted = new Set(orderedIds)
    if (existing.length !== wanted.size || existing.some((l) => !wanted.has(l.id))) throw linkifierOrderIncomplete()
    if (existing.length === 0) return
    await tx.$executeRaw`
      UPDATE realm_linkifier AS l SET "order" = v.ord - 1
      FROM unnest(${orderedIds}::int[]) WITH ORDINALITY AS v(id, ord)
      WHERE l.id = v.id AND l.realm_id = ${ctx.realm.id}`
    await emitLinkifiers(tx, emit, ctx.realm)
  })
}
