// Custom profile fields: administrators define, edit, reorder and delete the
// realm's fields (custom_profile_fields event with the full list to the
// realm); people set their own values and administrators anyone's
// (realm_user update `custom_profile_field` to those who can access the user).
import type { ActionContext, Emit, TxContext } from './context.js'
import { inTransaction } from './context.js'
import type { CustomProfileField, Tx, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import { isAdmin } from '../domain/roles.js'
import {
  badRequest,
  invalidProfileFieldData,
  invalidProfileFieldOrder,
  invalidProfileFieldType,
  invalidProfileFieldValue,
  mustBeAdmin,
  profileFieldLabelBlank,
  profileFieldNameInUse,
  profileFieldNotEditable,
  profileFieldNotFound,
  profileFieldRequired,
  textTooLong,
} from '../errors.js'
import { FIELD_TYPE, fetchCustomProfileFields } from '../queries/custom-profile-fields.js'
import { renderPlainDescription } from './render-description.js'
import { DEFAULT_EXTERNAL_ACCOUNTS } from '../domain/external-accounts.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { customProfileFieldsEvent, realmUserUpdateEvent } from '../events/schemas/index.js'

export const MAX_FIELD_NAME_LENGTH = 40
export const MAX_FIELD_HINT_LENGTH = 80
const MAX_SHORT_VALUE = 50
const MAX_LONG_VALUE = 500
const MAX_SUMMARY_FIELDS = 2
const RENDERED_TYPES = new Set<number>([FIELD_TYPE.SHORT_TEXT, FIELD_TYPE.LONG_TEXT])

export interface FieldInput {
  name?: string
  hint?: string
  fieldData?: Record<string, unknown>
  displayInProfileSummary?: boolean
  required?: boolean
  editableByUser?: boolean
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Checks field_data for the type; returns its stored (JSON text) form. */
function fieldDataFor(type: number, data: Record<string, unknown> | undefined): string {
  if (type === FIELD_TYPE.SELECT) {
    const choices = Object.entries(data ?? {})
    if (choices.length === 0) throw invalidProfileFieldData('Field must have at least one choice.')
    for (const [key, choice] of choices) {
      if (!isRecord(choice)) throw invalidProfileFieldData(`field_data["${key}"] is not a dict`)
      if (typeof choice.text !== 'string' || choice.text.trim() === '') throw invalidProfileFieldData(`field_data["${key}"]["text"] cannot be blank.`)
      if (typeof choice.order !== 'string' && typeof choice.order !== 'number') throw invalidProfileFieldData(`field_data["${key}"]["order"] is missing`)
    }
    const texts = choices.map(([, c]) => String((c as Record<string, unknown>).text))
    if (new Set(texts).size !== texts.length) throw invalidProfileFieldData('Field must not have duplicate choices.')
    return JSON.stringify(data)
  }
  if (type === FIELD_TYPE.EXTERNAL_ACCOUNT) {
    const subtype = data?.subtype
    if (typeof subtype !== 'string' || subtype === '') throw invalidProfileFieldData('field_data["subtype"] is missing')
    if (subtype === 'custom') {
      const pattern = data?.url_pattern
      if (typeof pattern !== 'string' || !pattern.includes('%(username)s') || !/^https?:\/\//.test(pattern)) {
        throw invalidProfileFieldData('Custom external account must define URL pattern')
      }
      return JSON.stringify({ subtype, url_pattern: pattern })
    }
    if (!DEFAULT_EXTERNAL_ACCOUNTS[subtype]) throw invalidProfileFieldData('Invalid external account type')
    return JSON.stringify({ subtype })
  }
  return ''
}

async function publishFields(tx: Tx, ctx: TxContext, emit: Emit): Promise<void> {
  const recipients = await tx.user.findMany({ where: { realmId: ctx.realm.id, isActive: true }, select: { id: true } })
  emit(customProfileFieldsEvent(await fetchCustomProfileFields(tx, ctx.realm.id)), recipients.map((u) => u.id))
}

async function checkSummaryLimit(tx: Tx, ctx: TxContext, type: number, exceptId?: number): Promise<void> {
  if (type === FIELD_TYPE.LONG_TEXT) throw badRequest('Field type not supported for display in profile summary.')
  const count = await tx.customProfileField.count({ where: { realmId: ctx.realm.id, displayInProfileSummary: true, ...(exceptId ? { id: { not: exceptId } } : {}) } })
  if (count >= MAX_SUMMARY_FIELDS) throw badRequest(`Only ${MAX_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`)
}

function checkLabels(name: string, hint: string): void {
  if (name === '') throw profileFieldLabelBlank()
  if (name.length > MAX_FIELD_NAME_LENGTH) throw textTooLong('name', MAX_FIELD_NAME_LENGTH)
  if (hint.length > MAX_FIELD_HINT_LENGTH) throw textTooLong('hint', MAX_FIELD_HINT_LENGTH)
}

async function accessField(tx: Tx, ctx: TxContext, id: number): Promise<CustomProfileField> {
  const field = await tx.customProfileField.findUnique({ where: { id } })
  if (!field || field.realmId !== ctx.realm.id) throw profileFieldNotFound(id)
  return field
}

export async function createProfileField(ctx: ActionContext, input: FieldInput & { fieldType: number }): Promise<number> {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  if (!(Object.values(FIELD_TYPE) as number[]).includes(input.fieldType)) throw invalidProfileFieldType()
  const fieldData = fieldDataFor(input.fieldType, input.fieldData)
  let name = (input.name ?? '').trim()
  let hint = (input.hint ?? '').trim()
  const subtype = input.fieldType === FIELD_TYPE.EXTERNAL_ACCOUNT ? String(input.fieldData?.subtype) : ''
  const preset = DEFAULT_EXTERNAL_ACCOUNTS[subtype]
  if (preset) ({ name, hint } = preset)
  checkLabels(name, hint)
  return inTransaction(ctx, async (tx, emit) => {
    if ((await idsMatchingLower(tx, 'custom_profile_field_name', { realm_id: ctx.realm.id }, [name])).length > 0) throw profileFieldNameInUse()
    if (input.displayInProfileSummary) await checkSummaryLimit(tx, ctx, input.fieldType)
    const last = await tx.customProfileField.aggregate({ where: { realmId: ctx.realm.id }, _max: { order: true } })
    const field = await tx.customProfileField.create({
      data: {
        realmId: ctx.realm.id,
        name,
        hint,
        type: input.fieldType,
        order: (last._max.order ?? 0) + 1,
        fieldData,
        displayInProfileSummary: input.displayInProfileSummary ?? false,
        required: input.required ?? false,
        editableByUser: input.editableByUser ?? true,
      },
    })
    await publishFields(tx, ctx, emit)
    return field.id
  })
}

export async function updateProfileField(ctx: ActionContext, id: number, input: FieldInput): Promise<void> {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  await inTransaction(ctx, async (tx, emit) => {
    const field = await accessField(tx, ctx, id)
    const isPreset = field.type === FIELD_TYPE.EXTERNAL_ACCOUNT && !!DEFAULT_EXTERNAL_ACCOUNTS[String(input.fieldData?.subtype ?? JSON.parse(field.fieldData || '{}').subtype)]
    const name = isPreset ? field.name : (input.name ?? field.name).trim()
    const hint = isPreset ? field.hint : (input.hint ?? field.hint).trim()
    checkLabels(name, hint)
    const fieldData = input.fieldData !== undefined ? fieldDataFor(field.type, input.fieldData) : field.fieldData
    if (name.toLowerCase() !== field.name.toLowerCase()) {
      const clash = (await idsMatchingLower(tx, 'custom_profile_field_name', { realm_id: ctx.realm.id }, [name])).some((r) => r.id !== id)
      if (clash) throw profileFieldNameInUse()
    }
    if (input.displayInProfileSummary && !field.displayInProfileSummary) await checkSummaryLimit(tx, ctx, field.type, id)
    await tx.customProfileField.update({
      where: { id },
      data: { name, hint, fieldData, displayInProfileSummary: input.displayInProfileSummary ?? field.displayInProfileSummary, required: input.required ?? field.required, editableByUser: input.editableByUser ?? field.editableByUser },
    })
    await publishFields(tx, ctx, emit)
  })
}

export async function deleteProfileField(ctx: ActionContext, id: number): Promise<void> {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  await inTransaction(ctx, async (tx, emit) => {
    await accessField(tx, ctx, id)
    await tx.customProfileField.delete({ where: { id } })
    await publishFields(tx, ctx, emit)
  })
}

export async function reorderProfileFields(ctx: ActionContext, order: number[]): Promise<void> {
  if (!isAdmin(ctx.user.role)) throw mustBeAdmin()
  await inTransaction(ctx, async (tx, emit) => {
    const ids = (await tx.customProfileField.findMany({ where: { realmId: ctx.realm.id }, select: { id: true } })).map((f) => f.id)
    if (order.length !== ids.length || new Set(order).size !== order.length || !order.every((id) => ids.includes(id))) throw invalidProfileFieldOrder()
    await tx.$executeRaw`
      UPDATE custom_profile_field AS f SET "order" = v.ord
      FROM unnest(${order}::int[]) WITH ORDINALITY AS v(id, ord)
      WHERE f.id = v.id AND f.realm_id = ${ctx.realm.id}`
    await publishFields(tx, ctx, emit)
  })
}

export type ProfileValueInput = string | number[] | null

/**
 * Checks a value for its field; returns the stored text ("" = remove).
 * `activeUserIds` holds the realm's active users among every user ID the
 * request's values name (looked up once for all of them).
 */
function storedValue(field: CustomProfileField, value: ProfileValueInput, activeUserIds: ReadonlySet<number>): string {
  if (value === null || value === '' || (Array.isArray(value) && value.length === 0)) return ''
  if (field.type === FIELD_TYPE.USER) {
    if (!Array.isArray(value)) throw invalidProfileFieldValue(`${field.name} is not a list`)
    const unknown = value.find((id) => !activeUserIds.has(id))
    if (unknown !== undefined) throw invalidProfileFieldValue(`Invalid user ID: ${unknown}`)
    return JSON.stringify([...new Set(value)])
  }
  if (typeof value !== 'string') throw invalidProfileFieldValue(`${field.name} is not a string`)
  switch (field.type) {
    case FIELD_TYPE.LONG_TEXT:
      if (value.length > MAX_LONG_VALUE) throw textTooLong(field.name, MAX_LONG_VALUE)
      return value
    case FIELD_TYPE.SELECT: {
      const choices = JSON.parse(field.fieldData || '{}') as Record<string, unknown>
      if (!(value in choices)) throw invalidProfileFieldValue(`'${value}' is not a valid choice for '${field.name}'.`)
      return value
    }
    case FIELD_TYPE.DATE:
      if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) throw invalidProfileFieldValue(`${field.name} is not a date`)
      return value
    case FIELD_TYPE.URL: {
      let ok = false
      try {
        ok = ['http:', 'https:'].includes(new URL(value).protocol)
      } catch {
        ok = false
      }
      if (!ok) throw invalidProfileFieldValue(`${field.name} is not a URL`)
      return value
    }
    default:
      if (value.length > MAX_SHORT_VALUE) throw textTooLong(field.name, MAX_SHORT_VALUE)
      return value
  }
}

/**
 * Sets (or, with an empty value, removes) values of `target`'s fields: the
 * user's own, or anyone's for administrators (PATCH /users/{id} profile_data).
 */
export async function updateProfileData(ctx: ActionContext, target: User, entries: { id: number; value: ProfileValueInput }[]): Promise<void> {
  if (target.id !== ctx.user.id && !isAdmin(ctx.user.role)) throw mustBeAdmin()
  await inTransaction(ctx, (tx, emit) => writeProfileData(tx, ctx, emit, target, entries))
}

/**
 * The writes of updateProfileData inside a caller's transaction (the caller
 * checked the permission). The fields, the users that user-type values name
 * and the target's current values are read once for all entries; entries are
 * then checked in order (the first bad one fails, as when each was written in
 * turn) and their events emitted in order; the final values are written with
 * one delete and one insert-or-update.
 */
export async function writeProfileData(tx: Tx, ctx: TxContext, emit: Emit, target: User, entries: { id: number; value: ProfileValueInput }[]): Promise<void> {
  if (entries.length === 0) return
  const audience = await usersWhoCanAccess(tx, ctx.realm, target.id)
  const fieldIds = [...new Set(entries.map((e) => e.id))]
  const fields = new Map((await tx.customProfileField.findMany({ where: { id: { in: fieldIds }, realmId: ctx.realm.id } })).map((f) => [f.id, f]))
  const userIds = [...new Set(entries.flatMap((e) => (Array.isArray(e.value) && fields.get(e.id)?.type === FIELD_TYPE.USER ? e.value : [])))]
  const activeUserIds = new Set(
    userIds.length === 0 ? [] : (await tx.user.findMany({ where: { id: { in: userIds }, realmId: ctx.realm.id, isActive: true }, select: { id: true } })).map((u) => u.id),
  )
  const stored = await tx.customProfileFieldValue.findMany({ where: { userId: target.id, fieldId: { in: fieldIds } }, select: { fieldId: true } })
  /** Each field's value after the entries so far: a row to write, or null for none. */
  const after = new Map<number, { value: string; renderedValue: string | null } | null>()
  const hasValue = (fieldId: number) => (after.has(fieldId) ? after.get(fieldId) !== null : stored.some((v) => v.fieldId === fieldId))
  for (const entry of entries) {
    const field = fields.get(entry.id)
    if (!field) throw profileFieldNotFound(entry.id)
    if (!field.editableByUser && !isAdmin(ctx.user.role)) throw profileFieldNotEditable()
    const value = storedValue(field, entry.value, activeUserIds)
    if (value === '') {
      if (field.required) throw profileFieldRequired(field.name)
      if (hasValue(field.id)) emit(profileFieldEvent(target.id, field, null), audience)
      after.set(field.id, null)
      continue
    }
    const renderedValue = RENDERED_TYPES.has(field.type) ? renderPlainDescription(value) : null
    after.set(field.id, { value, renderedValue })
    emit(profileFieldEvent(target.id, field, value, renderedValue), audience)
  }
  const removed = [...after].filter(([, row]) => row === null).map(([fieldId]) => fieldId)
  if (removed.length > 0) await tx.customProfileFieldValue.deleteMany({ where: { userId: target.id, fieldId: { in: removed } } })
  const written = [...after].flatMap(([fieldId, row]) => (row === null ? [] : [{ fieldId, ...row }]))
  if (written.length === 0) return
  await tx.$executeRaw`
    INSERT INTO custom_profile_field_value (user_id, field_id, value, rendered_value)
    SELECT ${target.id}::int, v.field_id, v.value, v.rendered_value
    FROM unnest(${written.map((w) => w.fieldId)}::int[], ${written.map((w) => w.value)}::text[], ${written.map((w) => w.renderedValue)}::text[])
      AS v(field_id, value, rendered_value)
    ON CONFLICT (user_id, field_id) DO UPDATE SET value = EXCLUDED.value, rendered_value = EXCLUDED.rendered_value`
}

/** DELETE /users/me/profile_data: removes the user's values of the given fields. */
export async function removeProfileData(ctx: ActionContext, fieldIds: number[]): Promise<void> {
  await updateProfileData(ctx, ctx.user, fieldIds.map((id) => ({ id, value: null })))
}

function profileFieldEvent(userId: number, field: CustomProfileField, value: string | null, renderedValue?: string | null) {
  const custom_profile_field = { id: field.id, value, ...(renderedValue ? { rendered_value: renderedValue } : {}) }
  return realmUserUpdateEvent({ user_id: userId, custom_profile_field })
}
