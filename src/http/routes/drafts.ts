// Drafts: POST/GET /drafts, PATCH/DELETE /drafts/{draft_id}.
import { Type } from 'typebox'
import { route } from '../route.js'
import { json } from '../params.js'
import { createDrafts, deleteDraft, editDraft } from '../../actions/drafts.js'
import { getDrafts, draftsSynchronized } from '../../queries/drafts.js'
import { draftsSyncDisabled } from '../../errors.js'
import { MAX_CLIENT_TIMESTAMP_SECONDS, MAX_DRAFTS_PER_REQUEST, MAX_USERS_PER_REQUEST } from '../../domain/limits.js'

const draftSchema = Type.Object(
  {
    type: Type.Union([Type.Literal(''), Type.Literal('stream'), Type.Literal('private')]),
    to: Type.Array(Type.Integer(), { maxItems: MAX_USERS_PER_REQUEST }),
    topic: Type.String(),
    content: Type.String(),
    timestamp: Type.Optional(Type.Number({ maximum: MAX_CLIENT_TIMESTAMP_SECONDS })),
  },
  { additionalProperties: false },
)

export const routes = [
  route({
    method: 'GET',
    url: '/drafts',
    handler: async (_input, ctx) => {
      if (!(await draftsSynchronized(ctx.prisma, ctx.user.id))) throw draftsSyncDisabled()
      const drafts = await getDrafts(ctx.prisma, ctx.user.id)
      return { count: drafts.length, drafts }
    },
  }),
  route({
    method: 'POST',
    url: '/drafts',
    params: { drafts: json(Type.Array(draftSchema, { maxItems: MAX_DRAFTS_PER_REQUEST })) },
    handler: async (input, ctx) => ({ ids: await createDrafts(ctx, input.drafts) }),
  }),
  route({
    method: 'PATCH',
    url: '/drafts/:draft_id',
    params: { draft_id: Type.Integer(), draft: json(draftSchema) },
    handler: async (input, ctx) => {
      await editDraft(ctx, input.draft_id, input.draft)
    },
  }),
  route({
    method: 'DELETE',
    url: '/drafts/:draft_id',
    params: { draft_id: Type.Integer() },
    handler: async (input, ctx) => {
      await deleteDraft(ctx, input.draft_id)
    },
  }),
]
