// Realm linkifiers: GET /realm/linkifiers, POST /realm/filters,
// PATCH/DELETE /realm/filters/{filter_id}, PATCH /realm/linkifiers (reorder).
import { Type } from 'typebox'
import { route } from '../route.js'
import { json } from '../params.js'
import { MAX_LINKIFIER_PATTERN_LENGTH, MAX_LINKIFIER_URL_TEMPLATE_LENGTH, MAX_LINKIFIERS_PER_REALM } from '../../domain/linkifiers.js'
import { addLinkifier, getLinkifiers, removeLinkifier, reorderLinkifiers, updateLinkifier } from '../../actions/linkifiers.js'

const linkifierParams = {
  pattern: Type.String({ maxLength: MAX_LINKIFIER_PATTERN_LENGTH }),
  url_template: Type.String({ maxLength: MAX_LINKIFIER_URL_TEMPLATE_LENGTH }),
}

export const routes = [
  route({
    method: 'GET',
    url: '/realm/linkifiers',
    handler: async (_input, ctx) => ({ linkifiers: await getLinkifiers(ctx.prisma, ctx.realm.id) }),
  }),
  route({
    method: 'POST',
    url: '/realm/filters',
    params: linkifierParams,
    handler: async (input, ctx) => ({ id: await addLinkifier(ctx, { pattern: input.pattern, urlTemplate: input.url_template }) }),
  }),
  route({
    method: 'PATCH',
    url: '/realm/filters/:filter_id',
    params: { filter_id: Type.Integer(), ...linkifierParams },
    handler: async (input, ctx) => {
      await updateLinkifier(ctx, input.filter_id, { pattern: input.pattern, urlTemplate: input.url_template })
      return {}
    },
  }),
  route({
    method: 'DELETE',
    url: '/realm/filters/:filter_id',
    params: { filter_id: Type.Integer() },
    handler: async (input, ctx) => {
      await removeLinkifier(ctx, input.filter_id)
      return {}
    },
  }),
  route({
    method: 'PATCH',
    url: '/realm/linkifiers',
    params: { ordered_linkifier_ids: json(Type.Array(Type.Integer(), { maxItems: MAX_LINKIFIERS_PER_REALM * 10 })) },
    handler: async (input, ctx) => {
      await reorderLinkifiers(ctx, input.ordered_linkifier_ids)
      return {}
    },
  }),
]
