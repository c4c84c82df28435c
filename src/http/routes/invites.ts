// Invitations: GET/POST /invites, POST /invites/multiuse, DELETE /invites/{id},
// DELETE /invites/multiuse/{id}, POST /invites/{id}/resend.
import { Type } from 'typebox'
import { route } from '../route.js'
import { json, nullAsAbsent, optional } from '../params.js'
import { createMultiuseInvite, inviteUsers, resendInvitation, revokeInvitation, revokeMultiuseInvite } from '../../actions/invites.js'
import { requireMemberOrAdmin } from '../../access/member-or-admin.js'
import { getInvites } from '../../queries/invites.js'
import { ROLE } from '../../domain/roles.js'
import { MAX_CHANNELS_PER_REQUEST, MAX_SMALL_LIST } from '../../domain/limits.js'

/** Minutes, or null for never; omitted: INVITATION_LINK_VALIDITY_MINUTES. */
const expiresIn = optional(json(Type.Union([Type.Integer(), Type.Null()])))
const inviteAs = optional(Type.Integer(), { default: ROLE.MEMBER })
const includeDefaults = optional(Type.Boolean(), { default: false })

/** Level 322: user groups the invited users join. */
const groupIds = optional(nullAsAbsent(json(Type.Array(Type.Integer(), { maxItems: MAX_SMALL_LIST }))))

export const routes = [
  route({
    method: 'GET',
    url: '/invites',
    handler: async (_input, ctx) => {
      requireMemberOrAdmin(ctx)
      return { invites: await getInvites(ctx) }
    },
  }),
  route({
    method: 'POST',
    url: '/invites',
    params: {
      invitee_emails: Type.String(),
      invite_expires_in_minutes: expiresIn,
      invite_as: inviteAs,
      stream_ids: json(Type.Array(Type.Integer(), { maxItems: MAX_CHANNELS_PER_REQUEST })),
      group_ids: groupIds,
      include_realm_default_subscriptions: includeDefaults,
      notify_referrer_on_join: optional(Type.Boolean(), { default: true }),
    },
    handler: async (input, ctx) => {
      await inviteUsers(ctx, {
        inviteeEmails: input.invitee_emails,
        expiresInMinutes: input.invite_expires_in_minutes,
        inviteAs: input.invite_as ?? ROLE.MEMBER,
        streamIds: input.stream_ids,
        groupIds: input.group_ids ?? [],
        includeRealmDefaultSubscriptions: input.include_realm_default_subscriptions ?? false,
        notifyReferrerOnJoin: input.notify_referrer_on_join ?? true,
      })
    },
  }),
  route({
    method: 'POST',
    url: '/invites/multiuse',
    params: {
      invite_expires_in_minutes: expiresIn,
      invite_as: inviteAs,
      stream_ids: optional(json(Type.Array(Type.Integer(), { maxItems: MAX_CHANNELS_PER_REQUEST })), { default: [] }),
      group_ids: groupIds,
      include_realm_default_subscriptions: includeDefaults,
    },
    handler: async (input, ctx) => ({
      invite_link: await createMultiuseInvite(ctx, {
        expiresInMinutes: input.invite_expires_in_minutes,
        inviteAs: input.invite_as ?? ROLE.MEMBER,
        streamIds: input.stream_ids ?? [],
        groupIds: input.group_ids ?? [],
        includeRealmDefaultSubscriptions: input.include_realm_default_subscriptions ?? false,
      }),
    }),
  }),
  route({
    method: 'DELETE',
    url: '/invites/:invite_id',
    params: { invite_id: Type.Integer() },
    handler: async (input, ctx) => {
      await revokeInvitation(ctx, input.invite_id)
    },
  }),
  route({
    method: 'DELETE',
    url: '/invites/multiuse/:invite_id',
    params: { invite_id: Type.Integer() },
    handler: async (input, ctx) => {
      await revokeMultiuseInvite(ctx, input.invite_id)
    },
  }),
  route({
    method: 'POST',
    url: '/invites/:invite_id/resend',
    params: { invite_id: Type.Integer() },
    handler: async (input, ctx) => {
      await resendInvitation(ctx, input.invite_id)
    },
  }),
]
