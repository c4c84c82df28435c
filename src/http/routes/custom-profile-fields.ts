// Custom profile fields: GET/POST /realm/profile_fields, PATCH/DELETE
// /realm/profile_fields/{id}, PATCH /realm/profile_fields (reorder), and
// PATCH/DELETE /users/me/profile_data.
import { Type } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import {
  createProfileField,
  deleteProfileField,
  removeProfileData,
  reorderProfileFields,
  updateProfileData,
  updateProfileField,
} from '../../actions/custom-profile-fields.js'
import { fetchCustomProfileFields } from '../../queries/custom-profile-fields.js'
import { MAX_SMALL_LIST, MAX_USERS_PER_REQUEST } from '../../domain/limits.js'

const fieldParams = {
  name: optional(Type.String()),
  hint: optional(Type.String()),
  field_data: optional(json(Type.Record(Type.String(), Type.Unknown()))),
  display_in_profile_summary: optional(Type.Boolean()),
  required: optional(Type.Boolean()),
  editable_by_user: optional(Type.Boolean()),
}

const fieldInput = (input: {
  name?: string
  hint?: string
  field_data?: Record<string, unknown>
  display_in_profile_summary?: boolean
  required?: boolean
  editable_by_user?: boolean
}) => ({
  name: input.name,
  hint: input.hint,
  fieldData: input.field_data,
  displayInProfileSummary: input.display_in_profile_summary,
  required: input.required,
  editableByUser: input.editable_by_user,
})

export const routes = [
  route({
    method: 'GET',
    url: '/realm/profile_fields',
    handler: async (_input, ctx) => ({ custom_fields: await fetchCustomProfileFields(ctx.prisma, ctx.realm.id) }),
  }),
  route({
    method: 'POST',
    url: '/realm/profile_fields',
    params: { ...fieldParams, field_type: optional(Type.Integer(), { default: 1 }) },
    handler: async (input, ctx) => ({ id: await createProfileField(ctx, { ...fieldInput(input), fieldType: input.field_type ?? 1 }) }),
  }),
  route({
    method: 'PATCH',
    url: '/realm/profile_fields',
    params: { order: json(Type.Array(Type.Integer(), { maxItems: MAX_SMALL_LIST })) },
    handler: async (input, ctx) => {
      await reorderProfileFields(ctx, input.order)
    },
  }),
  route({
    method: 'PATCH',
    url: '/realm/profile_fields/:field_id',
    params: { ...fieldParams, field_id: Type.Integer() },
    handler: async (input, ctx) => {
      await updateProfileField(ctx, input.field_id, fieldInput(input))
    },
  }),
  route({
    method: 'DELETE',
    url: '/realm/profile_fields/:field_id',
    params: { field_id: Type.Integer() },
    handler: async (input, ctx) => {
      await deleteProfileField(ctx, input.field_id)
    },
  }),
  route({
    method: 'PATCH',
    url: '/users/me/profile_data',
    params: {
      data: json(
        Type.Array(Type.Object({ id: Type.Integer(), value: Type.Union([Type.String(), Type.Array(Type.Integer(), { maxItems: MAX_USERS_PER_REQUEST }), Type.Null()]) }), {
          maxItems: MAX_SMALL_LIST,
        }),
      ),
    },
    handler: async (input, ctx) => {
      await updateProfileData(ctx, ctx.user, input.data)
    },
  }),
  route({
    method: 'DELETE',
    url: '/users/me/profile_data',
    params: { data: json(Type.Array(Type.Integer(), { maxItems: MAX_SMALL_LIST })) },
    handler: async (input, ctx) => {
      await removeProfileData(ctx, input.data)
    },
  }),
]
