// Realm settings (`realm` fetch type) and user settings (`user_settings` and
// the legacy top-level forms) of the register response (upstream §3.2–3.4, §10.1).
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../domain/credentials.js'
import { legacyFamilyOf } from '../domain/settings.js'
import { EDIT_HISTORY_VISIBILITY, editHistoryVisibilityName } from '../domain/message-edit.js'
import type { Realm, UserSettings } from '../db/index.js'
import { MAX_MESSAGE_LENGTH, MAX_STREAM_DESCRIPTION_LENGTH, MAX_STREAM_NAME_LENGTH, MAX_TOPIC_LENGTH } from '../domain/limits.js'
import { fakeEmailDomain, realmIconUrl, realmUrl } from '../present/realm.js'
import { DEFAULT_EXTERNAL_ACCOUNTS } from '../domain/external-accounts.js'

/** When this process started (upstream's SERVER_GENERATION). */
const SERVER_GENERATION = Math.floor(Date.now() / 1000)
/** The Jitsi server video calls use when the organization sets none (upstream's JITSI_SERVER_URL default). */
export const SERVER_JITSI_SERVER_URL = 'https://meet.jit.si'
/** Upstream's GIPHY ratings (realm_giphy_rating takes their IDs). */
const GIPHY_RATING_OPTIONS = {
  disabled: { name: 'GIPHY integration disabled', id: 0 },
  y: { name: 'Allow GIFs rated Y (Very young audience)', id: 1 },
  g: { name: 'Allow GIFs rated G (General audience)', id: 2 },
  pg: { name: 'Allow GIFs rated PG (Parental guidance)', id: 3 },
  pg13: { name: 'Allow GIFs rated PG-13 (Parental guidance - under 13)', id: 4 },
  r: { name: 'Allow GIFs rated R (Restricted)', id: 5 },
}

/** Upstream's EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS. */
export const EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS = 90

const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** Realm columns returned as `realm_<snake_case name>` unchanged. */
const REALM_SCALARS = [
  'name',
  'description',
  'orgType',
  'allowMessageEditing',
  'messageContentEditLimitSeconds',
  'moveMessagesWithinStreamLimitSeconds',
  'moveMessagesBetweenStreamsLimitSeconds',
  'messageContentDeleteLimitSeconds',
  'mandatoryTopics',
  'messageRetentionDays',
  'waitingPeriodThreshold',
  'inviteRequired',
  'emailsRestrictedToDomains',
  'disallowDisposableEmailAddresses',
  'passwordAuthEnabled',
  'sendWelcomeEmails',
  'nameChangesDisabled',
  'emailChangesDisabled',
  'avatarChangesDisabled',
  'requireUniqueNames',
  'defaultLanguage',
  'videoChatProvider',
  'jitsiServerUrl',
  'presenceDisabled',
  'enableReadReceipts',
  'enableGuestUserIndicator',
  'enableGuestUserDmWarning',
  'digestEmailsEnabled',
  'digestWeekday',
  'messageContentAllowedInEmailNotifications',
  'defaultCodeBlockLanguage',
  'giphyRating',
] as const satisfies readonly (keyof Realm)[]

export function realmState(realm: Realm, externalUrl: string, maxFileUploadSizeMib: number, spectator: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const name of REALM_SCALARS) out[`realm_${snake(name)}`] = realm[name]
  const url = realmUrl(realm, externalUrl)
  Object.assign(out, {
    realm_description: realm.renderedDescription,
    realm_uri: url,
    realm_url: url,
    realm_icon_url: realmIconUrl(realm, externalUrl),
    realm_icon_source: realm.iconUrl ? 'U' : 'G',
    realm_date_created: Math.floor(realm.dateCreated.getTime() / 1000),
    realm_message_edit_history_visibility_policy: editHistoryVisibilityName(realm.messageEditHistoryVisibilityPolicy),
    realm_allow_edit_history: realm.messageEditHistoryVisibilityPolicy !== EDIT_HISTORY_VISIBILITY.none,
    realm_new_stream_announcements_stream_id: realm.newStreamAnnouncementsStreamId ?? -1,
    realm_signup_announcements_stream_id: realm.signupAnnouncementsStreamId ?? -1,
    realm_moderation_request_channel_id: realm.moderationRequestChannelId ?? -1,
    realm_zulip_update_announcements_stream_id: -1,
    // Upstream's shape since feature level 241; Roost's only backend is email and password.
    realm_authentication_methods: { Email: { enabled: realm.passwordAuthEnabled, available: true } },
    realm_email_auth_enabled: realm.passwordAuthEnabled,
    realm_enable_spectator_access: realm.webPublicAccessEnabled,
    realm_bot_domain: fakeEmailDomain(realm, externalUrl),
    realm_default_external_accounts: DEFAULT_EXTERNAL_ACCOUNTS,
    // Roost renders no image or link previews and has no wide logo of its own: the icon stands in.
    realm_inline_image_preview: false,
    realm_inline_url_embed_preview: false,
    server_inline_image_preview: false,
    server_inline_url_embed_preview: false,
    realm_logo_source: 'D',
    realm_logo_url: realmIconUrl(realm, externalUrl),
    realm_night_logo_source: 'D',
    realm_night_logo_url: realmIconUrl(realm, externalUrl),
    upgrade_text_for_wide_organization_logo: '',
    realm_upload_quota_mib: null,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_want_advertise_in_communities_directory: false,
    jitsi_server_url: realm.jitsiServerUrl ?? SERVER_JITSI_SERVER_URL,
    server_jitsi_server_url: SERVER_JITSI_SERVER_URL,
    giphy_api_key: '',
    giphy_rating_options: GIPHY_RATING_OPTIONS,
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_web_public_streams_enabled: true,
    server_generation: SERVER_GENERATION,
    server_thumbnail_formats: [],
    settings_send_digest_emails: false,
    development_environment: false,
    zulip_plan_is_not_limited: true,
    realm_available_video_chat_providers: { disabled: { name: 'None', id: 0 }, jitsi_meet: { name: 'Jitsi Meet', id: 1 } },
    realm_is_zephyr_mirror_realm: false,
    realm_push_notifications_enabled: false,
    realm_plan_type: 1,
    realm_org_type: realm.orgType,
    max_message_length: MAX_MESSAGE_LENGTH,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_stream_name_length: MAX_STREAM_NAME_LENGTH,
    max_stream_description_length: MAX_STREAM_DESCRIPTION_LENGTH,
    max_file_upload_size_mib: realm.maxFileUploadSizeMib ?? maxFileUploadSizeMib,
    max_avatar_file_size_mib: 5,
    max_icon_file_size_mib: 5,
    max_logo_file_size_mib: 5,
    event_queue_longpoll_timeout_seconds: EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS,
    server_presence_ping_interval_seconds: 60,
    server_presence_offline_threshold_seconds: 200,
    server_typing_started_expiry_period_milliseconds: 45000,
    server_typing_stopped_wait_period_milliseconds: 12000,
    server_typing_started_wait_period_milliseconds: 30000,
    server_needs_upgrade: false,
    password_min_length: PASSWORD_MIN_LENGTH,
    password_max_length: PASSWORD_MAX_LENGTH,
    password_min_guesses: 10000,
    // Level 332: upstream's default bounds on the delay before a deactivated organization's
    // data is deleted. Roost deletes none (the operator deactivates with `roost org
    // deactivate`, which keeps the data): never sooner than 14 days, and kept indefinitely.
    server_min_deactivated_realm_deletion_days: 14,
    server_max_deactivated_realm_deletion_days: null,
    // Level 369: the video the web app's navigation tour shows; Roost serves none.
    navigation_tour_video_url: null,
  })
  if (spectator) {
    // Upstream forces these for web-public visitors.
    Object.assign(out, { realm_allow_message_editing: false, realm_edit_topic_policy: 2, realm_delete_own_message_policy: 2, realm_presence_disabled: true })
  }
  return out
}

export const EMOJISET_CHOICES = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
  { key: 'google-blob', text: 'Google blobs' },
]
export const AVAILABLE_NOTIFICATION_SOUNDS = ['zulip', 'ding', 'chime-bell', 'none']

/** The `user_settings` object: every setting column in wire form, plus timezone and the choice lists. */
export function userSettingsState(settings: UserSettings | null, timezone: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (settings) {
    for (const [key, value] of Object.entries(settings)) if (key !== 'userId') out[snake(key)] = value
  }
  return { ...out, timezone, emojiset_choices: EMOJISET_CHOICES, available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS }
}

/** Legacy top-level settings for clients without user_settings_object. */
export function legacySettingsState(userSettings: Record<string, unknown>, kind: 'display' | 'notifications'): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(userSettings)) {
    if (key === 'emojiset_choices' || key === 'available_notification_sounds') continue
    if (legacyFamilyOf(key) === (kind === 'notifications' ? 'notification' : 'display')) out[key] = value
  }
  if (kind === 'display') out.emojiset_choices = EMOJISET_CHOICES
  else out.available_notification_sounds = AVAILABLE_NOTIFICATION_SOUNDS
  return out
}
