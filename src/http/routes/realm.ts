// PATCH /realm: organization settings (actions/update-realm.ts).
import { Type, type TSchema } from 'typebox'
import { route } from '../route.js'
import { json, optional } from '../params.js'
import { REALM_PERMISSION_SETTING_NAMES } from '../../domain/permission-settings.js'
import { updateRealm, type RealmUpdateInput } from '../../actions/update-realm.js'

const BOOLEANS = [
  'enable_spectator_access', 'allow_message_editing', 'allow_edit_history', 'mandatory_topics', 'invite_required',
  'emails_restricted_to_domains', 'disallow_disposable_email_addresses', 'send_welcome_emails', 'name_changes_disabled',
  'email_changes_disabled', 'avatar_changes_disabled', 'require_unique_names', 'presence_disabled', 'enable_read_receipts',
  'enable_guest_user_indicator', 'enable_guest_user_dm_warning', 'digest_emails_enabled', 'message_content_allowed_in_email_notifications',
]
const INTEGERS = [
  'org_type', 'edit_topic_policy', 'move_messages_between_streams_policy', 'delete_own_message_policy', 'wildcard_mention_policy',
  'invite_to_realm_policy', 'invite_to_stream_policy', 'user_group_edit_policy', 'add_custom_emoji_policy',
  'create_web_public_stream_policy', 'bot_creation_policy', 'video_chat_provider', 'digest_weekday', 'giphy_rating',
  'new_stream_announcements_stream_id', 'signup_announcements_stream_id', 'moderation_request_channel_id',
]
const STRINGS = ['name', 'description', 'default_language', 'default_code_block_language', 'message_edit_history_visibility_policy']
/** An integer, or "unlimited". */
const LIMITS = [
  'message_content_edit_limit_seconds', 'move_messages_within_stream_limit_seconds', 'move_messages_between_streams_limit_seconds',
  'message_content_delete_limit_seconds', 'message_retention_days',
]

const params: Record<string, TSchema> = {
  ...Object.fromEntries(BOOLEANS.map((n) => [n, optional(Type.Boolean())])),
  ...Object.fromEntries(INTEGERS.map((n) => [n, optional(Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 }))])),
  ...Object.fromEntries(STRINGS.map((n) => [n, optional(Type.String({ maxLength: 10_000 }))])),
  ...Object.fromEntries(LIMITS.map((n) => [n, optional(Type.Union([Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 }), Type.String({ maxLength: 100 })]))])),
  waiting_period_threshold: optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
  // Group-setting values as JSON {new, old?} (or a bare group ID); actions/update-realm.ts checks their shape.
  ...Object.fromEntries(REALM_PERMISSION_SETTING_NAMES.map((n) => [n, optional(json(Type.Unknown()))])),
}

export const routes = [
  route({
    method: 'PATCH',
    url: '/realm',
    params,
    handler: async (input, ctx) => updateRealm(ctx, input as RealmUpdateInput),
  }),
]
