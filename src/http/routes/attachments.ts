// The user's uploads: GET /attachments, DELETE /attachments/{attachment_id};
// and avatars by user: GET /avatar/{user_id or email}[/medium] (outside
// /api/v1, a redirect to the image, as upstream serves it).
import { Type } from 'typebox'
import { route } from '../route.js'
import { optional } from '../params.js'
import { getAttachments } from '../../queries/attachments.js'
import { removeAttachment } from '../../actions/attachments.js'
import { avatarRedirectUrl } from '../../queries/avatar-redirect.js'
import { notLoggedIn } from '../../errors.js'
import type { HandlerExtras } from '../route.js'
import type { RequestContext } from '../../services.js'
import type { User } from '../../db/index.js'

async function redirectToAvatar(ctx: RequestContext & HandlerExtras & { user: User | undefined }, emailOrId: string, medium: boolean): Promise<void> {
  if (!ctx.user && !ctx.realm.webPublicAccessEnabled) throw notLoggedIn()
  const url = await avatarRedirectUrl(ctx, emailOrId, medium)
  ctx.reply.header('Cache-Control', 'private, max-age=0').redirect(url, 302)
}

export const routes = [
  route({
    method: 'GET',
    url: '/attachments',
    handler: async (_input, ctx) => getAttachments(ctx.prisma, ctx.realm.id, ctx.user.id),
  }),
  route({
    method: 'DELETE',
    url: '/attachments/:attachment_id',
    params: { attachment_id: Type.Integer() },
    handler: async (input, ctx) => {
      await removeAttachment(ctx, input.attachment_id)
    },
  }),
  route({
    method: 'GET',
    url: '/avatar/:email_or_id',
    outsideApi: true,
    raw: true,
    auth: 'optional',
    params: { email_or_id: Type.String(), medium: optional(Type.Boolean()) },
    handler: async (input, ctx) => redirectToAvatar(ctx, input.email_or_id, input.medium ?? false),
  }),
  route({
    method: 'GET',
    url: '/avatar/:email_or_id/medium',
    outsideApi: true,
    raw: true,
    auth: 'optional',
    params: { email_or_id: Type.String() },
    handler: async (input, ctx) => redirectToAvatar(ctx, input.email_or_id, true),
  }),
]
