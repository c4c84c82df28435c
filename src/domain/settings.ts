// The user settings of PATCH /settings (spec "User settings"; upstream
// UserBaseSettings, upstream-behaviour §10.1): wire name → UserSettings column,
// value type, allowed values and the legacy event family it belonged to
// before user_settings events existed (feature level 89). Pure data and checks.
import type { UserSettings } from '../db/index.js'
import { invalidEmailBatchingPeriod, invalidNotificationSound, invalidSettingValue } from '../errors.js'
import { isLanguageCode } from './languages.js'

export type SettingKind = 'boolean' | 'integer' | 'string'
export type LegacyFamily = 'display' | 'notification' | null

export interface SettingSpec {
  name: string
  column: Exclude<keyof UserSettings, 'userId'>
  kind: SettingKind
  /** Enumerated values; absent = any value of the kind (checked elsewhere when special). */
  values?: readonly (number | string)[]
  legacy: LegacyFamily
}

export const EMOJISETS = ['google', 'google-blob', 'twitter', 'text'] as const
export const WEB_HOME_VIEWS = ['recent_topics', 'inbox', 'all_messages'] as const
export const WEB_ANIMATE_IMAGE_PREVIEWS = ['always', 'on_hover', 'never'] as const
/** Sounds the web client ships, plus "none". */
export const NOTIFICATION_SOUNDS = ['chime-bell', 'ding', 'zulip', 'none'] as const
export const MAX_EMAIL_BATCHING_PERIOD_SECONDS = 7 * 24 * 3600

const b = (name: string, column: SettingSpec['column'], legacy: LegacyFamily = null): SettingSpec => ({ name, column, kind: 'boolean', legacy })
const i = (name: string, column: SettingSpec['column'], values: readonly number[] | undefined, legacy: LegacyFamily = null): SettingSpec => ({
  name,
  column,
  kind: 'integer',
  values,
  legacy,
})
const s = (name: string, column: SettingSpec['column'], values: readonly string[] | undefined, legacy: LegacyFamily = null): SettingSpec => ({
  name,
  column,
  kind: 'string',
  values,
  legacy,
})

/**
 * Every settable user setting except timezone (a user column), in upstream's
 * property_types order. `legacy`: the setting is in upstream's frozen
 * display_settings_legacy / notification_settings_legacy (what clients without
 * user_settings_object get at the top level of /register and as
 * update_display_settings / update_global_notifications events).
 */
export const USER_SETTINGS: readonly SettingSpec[] = [
  // Display.
  i('color_scheme', 'colorScheme', [1, 2, 3], 'display'),
  s('default_language', 'defaultLanguage', undefined, 'display'),
  s('web_home_view', 'webHomeView', WEB_HOME_VIEWS, 'display'),
  i('demote_inactive_streams', 'demoteInactiveStreams', [1, 2, 3], 'display'),
  b('dense_mode', 'denseMode', 'display'),
  s('emojiset', 'emojiset', EMOJISETS, 'display'),
  b('enable_drafts_synchronization', 'enableDraftsSynchronization', 'display'),
  b('enter_sends', 'enterSends', 'display'),
  b('fluid_layout_width', 'fluidLayoutWidth', 'display'),
  b('high_contrast_mode', 'highContrastMode', 'display'),
  b('left_side_userlist', 'leftSideUserlist', 'display'),
  b('starred_message_counts', 'starredMessageCounts', 'display'),
  b('translate_emoticons', 'translateEmoticons', 'display'),
  b('display_emoji_reaction_users', 'displayEmojiReactionUsers'),
  b('twenty_four_hour_time', 'twentyFourHourTime', 'display'),
  b('web_escape_navigates_to_home_view', 'webEscapeNavigatesToHomeView'),
  i('web_mark_read_on_scroll_policy', 'webMarkReadOnScrollPolicy', [1, 2, 3]),
  i('web_channel_default_view', 'webChannelDefaultView', [1, 2]),
  i('web_font_size_px', 'webFontSizePx', undefined),
  i('web_line_height_percent', 'webLineHeightPercent', undefined),
  b('receives_typing_notifications', 'receivesTypingNotifications'),
  i('user_list_style', 'userListStyle', [1, 2, 3]),
  s('web_animate_image_previews', 'webAnimateImagePreviews', WEB_ANIMATE_IMAGE_PREVIEWS),
  i('web_stream_unreads_count_display_policy', 'webStreamUnreadsCountDisplayPolicy', [1, 2, 3]),
  b('web_navigate_to_sent_message', 'webNavigateToSentMessage'),
  b('web_suggest_update_timezone', 'webSuggestUpdateTimezone'),
  b('hide_ai_features', 'hideAiFeatures'),
  // Notifications.
  b('enable_stream_desktop_notifications', 'enableStreamDesktopNotifications', 'notification'),
  b('enable_stream_email_notifications', 'enableStreamEmailNotifications', 'notification'),
  b('enable_stream_push_notifications', 'enableStreamPushNotifications', 'notification'),
  b('enable_stream_audible_notifications', 'enableStreamAudibleNotifications', 'notification'),
  s('notification_sound', 'notificationSound', NOTIFICATION_SOUNDS, 'notification'),
  b('wildcard_mentions_notify', 'wildcardMentionsNotify', 'notification'),
  b('enable_followed_topic_desktop_notifications', 'enableFollowedTopicDesktopNotifications'),
  b('enable_followed_topic_email_notifications', 'enableFollowedTopicEmailNotifications'),
  b('enable_followed_topic_push_notifications', 'enableFollowedTopicPushNotifications'),
  b('enable_followed_topic_audible_notifications', 'enableFollowedTopicAudibleNotifications'),
  b('enable_followed_topic_wildcard_mentions_notify', 'enableFollowedTopicWildcardMentionsNotify'),
  b('enable_desktop_notifications', 'enableDesktopNotifications', 'notification'),
  b('enable_sounds', 'enableSounds', 'notification'),
  i('email_notifications_batching_period_seconds', 'emailNotificationsBatchingPeriodSeconds', undefined, 'notification'),
  b('enable_offline_email_notifications', 'enableOfflineEmailNotifications', 'notification'),
  b('enable_offline_push_notifications', 'enableOfflinePushNotifications', 'notification'),
  b('enable_online_push_notifications', 'enableOnlinePushNotifications', 'notification'),
  b('enable_digest_emails', 'enableDigestEmails', 'notification'),
  b('enable_marketing_emails', 'enableMarketingEmails', 'notification'),
  b('enable_login_emails', 'enableLoginEmails', 'notification'),
  b('message_content_in_email_notifications', 'messageContentInEmailNotifications', 'notification'),
  b('pm_content_in_desktop_notifications', 'pmContentInDesktopNotifications', 'notification'),
  i('desktop_icon_count_display', 'desktopIconCountDisplay', [1, 2, 3, 4], 'notification'),
  i('realm_name_in_email_notifications_policy', 'realmNameInEmailNotificationsPolicy', [1, 2, 3], 'notification'),
  i('automatically_follow_topics_policy', 'automaticallyFollowTopicsPolicy', [1, 2, 3, 4]),
  i('automatically_unmute_topics_in_muted_streams_policy', 'automaticallyUnmuteTopicsInMutedStreamsPolicy', [1, 2, 3, 4]),
  b('automatically_follow_topics_where_mentioned', 'automaticallyFollowTopicsWhereMentioned'),
  // Privacy.
  b('presence_enabled', 'presenceEnabled', 'notification'),
  b('send_private_typing_notifications', 'sendPrivateTypingNotifications'),
  b('send_stream_typing_notifications', 'sendStreamTypingNotifications'),
  b('send_read_receipts', 'sendReadReceipts'),
  i('email_address_visibility', 'emailAddressVisibility', [1, 2, 3, 4, 5]),
  b('allow_private_data_export', 'allowPrivateDataExport'),
]

export const SETTINGS_BY_NAME: ReadonlyMap<string, SettingSpec> = new Map(USER_SETTINGS.map((spec) => [spec.name, spec]))

/** Family of a legacy event for a setting name (`timezone` counted as display, as upstream did). */
export function legacyFamilyOf(name: string): LegacyFamily {
  if (name === 'timezone') return 'display'
  return SETTINGS_BY_NAME.get(name)?.legacy ?? null
}

/** A value of a setting, checked as PATCH /settings checks it (its type already checked); throws the API's error naming the setting. */
export function checkUserSettingValue(name: string, value: boolean | number | string): void {
  const spec = SETTINGS_BY_NAME.get(name)
  if (!spec) return
  if (name === 'notification_sound') {
    if (!spec.values?.includes(value as string)) throw invalidNotificationSound(String(value))
    return
  }
  if (spec.values && !spec.values.includes(value as never)) throw invalidSettingValue(name)
  if (name === 'default_language' && !isLanguageCode(String(value))) throw invalidSettingValue(name)
  if (name === 'email_notifications_batching_period_seconds') {
    const n = Number(value)
    if (n <= 0 || n > MAX_EMAIL_BATCHING_PERIOD_SECONDS) throw invalidEmailBatchingPeriod(n)
  }
  if ((name === 'web_font_size_px' || name === 'web_line_height_percent') && Number(value) <= 0) throw invalidSettingValue(name)
}
