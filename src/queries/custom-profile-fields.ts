// Custom profile field definitions as the API shows them (GET
// /realm/profile_fields, register keys `custom_profile_fields` and
// `custom_profile_field_types`, the custom_profile_fields event).
import type { CustomProfileField, PrismaClient, Tx } from '../db/index.js'
import type { CustomProfileFieldDict as FieldDict } from '../events/schemas/common.js'

export const FIELD_TYPE = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const

const TYPE_NAMES: Record<keyof typeof FIELD_TYPE, string> = {
  SHORT_TEXT: 'Text (short)',
  LONG_TEXT: 'Text (long)',
  SELECT: 'List of options',
  DATE: 'Date picker',
  URL: 'Link',
  USER: 'Person picker',
  EXTERNAL_ACCOUNT: 'External account',
  PRONOUNS: 'Pronouns',
}

/** Register key `custom_profile_field_types`: {SHORT_TEXT: {id: 1, name: "Text (short)"}, …}. */
export function customProfileFieldTypes(): Record<string, { id: number; name: string }> {
  return Object.fromEntries(Object.entries(FIELD_TYPE).map(([key, id]) => [key, { id, name: TYPE_NAMES[key as keyof typeof FIELD_TYPE] }]))
}

export type { FieldDict }

export function presentField(field: CustomProfileField): FieldDict {
  return {
    id: field.id,
    type: field.type,
    order: field.order,
    name: field.name,
    hint: field.hint,
    field_data: field.fieldData,
    ...(field.displayInProfileSummary ? { display_in_profile_summary: true as const } : {}),
    required: field.required,
    editable_by_user: field.editableByUser,
  }
}

/** The realm's fields in display order (register key `custom_profile_fields`). */
export async function fetchCustomProfileFields(prisma: PrismaClient | Tx, realmId: number): Promise<FieldDict[]> {
  const fields = await prisma.customProfileField.findMany({ where: { realmId }, orderBy: [{ order: 'asc' }, { id: 'asc' }] })
  return fields.map(presentField)
}
