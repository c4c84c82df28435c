// Saved snippets: GET/POST /saved_snippets, PATCH/DELETE /saved_snippets/{saved_snippet_id}
// (upstream levels 297 and 368).
import { Type } from 'typebox'
import { route } from '../route.js'
import { optional } from '../params.js'
import { createSavedSnippet, deleteSavedSnippet, editSavedSnippet } from '../../actions/saved-snippets.js'
import { getSavedSnippets } from '../../queries/saved-snippets.js'

export const routes = [
  route({
    method: 'GET',
    url: '/saved_snippets',
    handler: async (_input, ctx) => ({ saved_snippets: await getSavedSnippets(ctx.prisma, ctx.user.id) }),
  }),
  route({
    method: 'POST',
    url: '/saved_snippets',
    params: { title: Type.String(), content: Type.String() },
    handler: async (input, ctx) => ({ saved_snippet_id: await createSavedSnippet(ctx, input) }),
  }),
  route({
    method: 'PATCH',
    url: '/saved_snippets/:saved_snippet_id',
    params: { saved_snippet_id: Type.Integer(), title: optional(Type.String()), content: optional(Type.String()) },
    handler: async (input, ctx) => {
      await editSavedSnippet(ctx, input.saved_snippet_id, { title: input.title, content: input.content })
    },
  }),
  route({
    method: 'DELETE',
    url: '/saved_snippets/:saved_snippet_id',
    params: { saved_snippet_id: Type.Integer() },
    handler: async (input, ctx) => {
      await deleteSavedSnippet(ctx, input.saved_snippet_id)
    },
  }),
]
