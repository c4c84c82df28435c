// The wire form of a custom profile field (register's custom_profile_fields and its event).
export interface FieldDict {
  id: number
  type: number
  order: number
  name: string
  hint: string
  field_data: string
  display_in_profile_summary?: true
  required: boolean
}
