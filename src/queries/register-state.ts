// The initial state of POST /register: each key present only when
// fetch_event_types selects it (upstream-behaviour §3.2). The route creates
// the queue first, then reads this snapshot, so no change falls between them.
import { EMPTY_TOPIC_DISPLAY_NAME, topicForClient } from '../domain/topics.js'
import type { PrismaClient, Realm, Stream, User, UserSettings } from '../db/index.js'
import type { Config } from '../config.js'
import { realmPermissionsOf } from './realm-permissions.js'
import { isAdmin, isGuest, isModeratorOrAbove } from '../domain/roles.js'
import type { ClientCapabilities } from '../events/queues/index.js'
import { presentStream, presentSubscription, sortByName, type SubscriptionObject } from '../present/stream.js'
import { getBillingAdminIds } from './billing-admins.js'
import { getStreamGroupContext, groupGrantsOf } from './stream-permissions.js'
import { avatarUrl, avatarUrlMedium, inaccessibleUserDict, presentUser, type UserDict } from '../present/user.js'
import { fakeEmailDomain } from '../present/realm.js'
import { accessibleUserIds } from '../access/user.js'
import { streamNotificationDefaults, withInheritedNotifications } from '../domain/stream-notifications.js'
import { canSeeStreamMetadata } from '../domain/stream-access.js'
import { versionFields } from '../domain/upstream-names.js'
import { getDefaultStreamIds, getStreams, getSubscriberIds } from './streams.js'
import { getUsers } from './users.js'
import { getDrafts } from './drafts.js'
import { getSavedSnippets } from './saved-snippets.js'
import { fetchMutedTopics, fetchUserTopics } from './user-topics.js'
import { fetchMutedUsers } from './muted-users.js'
import { fetchAlertWords } from './alert-words.js'
import { customProfileFieldTypes, fetchCustomProfileFields } from './custom-profile-fields.js'
import { fetchPresenceState } from './presence.js'
import { fetchUserStatuses } from './user-status.js'
import type { PresenceStore } from '../presence/store.js'
import type { PresenceMirror } from '../presence/mirror.js'
import type { PresenceDirectory } from './presence-directory.js'
import { fetchScheduledMessages } from './scheduled-messages.js'
import { getUserGroups } from './user-groups.js'
import { getRecentPrivateConversations, getStarredMessageIds, summarizeUnread } from './register-unread.js'
import type { RegisterCore, RegisterCoreParts } from './register-core.js'
import { legacySettingsState, realmState, userSettingsState } from './register-settings.js'
import { getRealmEmoji } from './realm-emoji.js'
import { serverEmojiDataUrl } from '../present/emoji-data.js'
import { fetchRealmExtras } from './register-realm.js'

export interface RegisterStateContext {
  prisma: PrismaClient
  realm: Realm
  /** null for a web-public visitor. */
  user: User | null
  config: Config
  presence: PresenceStore
  presenceMirror: PresenceMirror
  /** The per-node directory of users' emails and join dates; absent: read through `prisma` (in the snapshot). */
  presenceDirectory?: PresenceDirectory
  /** The user's core state (register-core.ts), read with `registerCoreParts`; null for a web-public visitor. */
  core: RegisterCore | null
  now: () => Date
}

export interface RegisterStateOptions {
  /** null: every key. */
  fetchEventTypes: string[] | null
  capabilities: ClientCapabilities
  clientExtavatar: boolean
  includeSubscribers: boolean
  slimPresence: boolean
  /** Level 288: presence only of users connected within this many days (default 14). */
  presenceHistoryLimitDays?: number
}

const MAX_DRAFTS_IN_REGISTER_RESPONSE = 1000

const wants = (fetchEventTypes: string[] | null, type: string): boolean => fetchEventTypes === null || fetchEventTypes.includes(type)

/** The parts of the core statement fetchRegisterState uses for these event types. */
export function registerCoreParts(fetchEventTypes: string[] | null, capabilities: Pick<ClientCapabilities, 'archived_channels'>): RegisterCoreParts {
  const want = (type: string) => wants(fetchEventTypes, type)
  return {
    maxMessageId: want('message'),
    subscriptions: want('subscription'),
    unread: want('message') && want('update_message_flags'),
    archivedChannels: capabilities.archived_channels,
  }
}

/**
 * Event types whose state is the core statement's or needs no database read
 * (given the per-node presence directory). A registration asking only for
 * these, without include_subscribers, by a user who is not a guest (whose
 * reachable users are read separately), reads its database state in that
 * one statement, whose snapshot is then the queue's: no transaction.
 * Anything else (no fetch_event_types at all included) is read in the
 * repeatable-read transaction.
 */
const CORE_ONLY_EVENT_TYPES = new Set([
  'message',
  'update_message_flags',
  'subscription',
  'presence',
  'user_settings',
  'update_display_settings',
  'update_global_notifications',
  'realm_filters',
  'onboarding_steps',
  // No state of their own.
  'typing',
  'typing_edit_message',
  'reaction',
  'update_message',
  'delete_message',
  'heartbeat',
])

export function stateIsCoreOnly(fetchEventTypes: string[] | null, options: { includeSubscribers: boolean }, user: User): boolean {
  return fetchEventTypes !== null && !options.includeSubscribers && !isGuest(user.role) && fetchEventTypes.every((type) => CORE_ONLY_EVENT_TYPES.has(type))
}

export async function fetchRegisterState(ctx: RegisterStateContext, options: RegisterStateOptions): Promise<Record<string, unknown>> {
  const want = (type: string): boolean => wants(options.fetchEventTypes, type)
  const { prisma, realm, user, core } = ctx
  const state: Record<string, unknown> = versionFields(ctx.config.upstreamNames)
  const settings = core?.settings ?? null
  const userSettings = userSettingsState(settings, user?.timezone ?? '')

  if (want('alert_words')) {
    state.alert_words = user ? await fetchAlertWords(prisma, user.id) : []
  }
  if (want('custom_profile_fields')) {
    state.custom_profile_fields = await fetchCustomProfileFields(prisma, realm.id)
    state.custom_profile_field_types = customProfileFieldTypes()
  }
  if (want('message')) state.max_message_id = core?.maxMessageId ?? -1
  if (want('presence')) {
    if (user) Object.assign(state, await fetchPresenceState({ ...ctx, user }, { slimPresence: options.slimPresence, historyLimitDays: options.presenceHistoryLimitDays }))
    else Object.assign(state, { presences: {}, presence_last_update_id: -1, server_timestamp: ctx.now().getTime() / 1000 })
  }
  if (want('realm')) Object.assign(state, realmState(realm, ctx.config.externalUrl, ctx.config.maxFileUploadSizeMib, user === null))
  if (want('realm')) state.server_emoji_data_url = serverEmojiDataUrl(realm, ctx.config.externalUrl)
  // Level 334: what clients show for the empty topic (and get for it without the empty_topic_name capability).
  if (want('realm')) state.realm_empty_topic_display_name = EMPTY_TOPIC_DISPLAY_NAME
  Object.assign(state, await fetchRealmExtras(ctx, want))
  if (want('realm_user')) Object.assign(state, await realmUserState(ctx, options))
  if (want('realm_linkifiers')) {
    state.realm_linkifiers = options.capabilities.linkifier_url_template
      ? (await prisma.realmLinkifier.findMany({ where: { realmId: realm.id }, orderBy: [{ order: 'asc' }, { id: 'asc' }] })).map((l) => ({ id: l.id, pattern: l.pattern, url_template: l.urlTemplate }))
      : []
  }
  if (want('realm_filters')) state.realm_filters = []
  if (want('recent_private_conversations')) state.recent_private_conversations = user ? await getRecentPrivateConversations(prisma, user.id) : []
  if (want('subscription')) Object.assign(state, await subscriptionState(ctx, options, settings))
  if (want('message') && want('update_message_flags')) {
    state.unread_msgs = user && core?.unread
      ? summarizeUnread(user.id, core.unread)
      : { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false }
  }
  if (want('starred_messages')) state.starred_messages = user ? await getStarredMessageIds(prisma, user.id) : []
  if (want('stream')) state.streams = await visibleStreams(ctx, options)
  if (want('default_streams')) {
    // Level 330: channel IDs, not channel objects.
    state.realm_default_streams = user && isGuest(user.role) ? [] : await getDefaultStreamIds(prisma, realm.id)
  }
  if (want('drafts')) {
    // Upstream sends at most the 1000 newest drafts, newest first.
    const drafts = user ? await getDrafts(prisma, user.id) : []
    state.drafts = drafts.sort((a, b) => b.timestamp - a.timestamp || b.id - a.id).slice(0, MAX_DRAFTS_IN_REGISTER_RESPONSE)
  }
  if (want('saved_snippets')) state.saved_snippets = user ? await getSavedSnippets(prisma, user.id) : []
  if (want('scheduled_messages')) state.scheduled_messages = user ? await fetchScheduledMessages(prisma, user.id) : []
  if (want('realm_user_groups')) state.realm_user_groups = await getUserGroups(prisma, realm.id, { includeDeactivated: options.capabilities.include_deactivated_groups })
  if (want('realm_emoji')) state.realm_emoji = await getRealmEmoji(prisma, realm.id)
  if (want('muted_users')) state.muted_users = user ? await fetchMutedUsers(prisma, user.id) : []
  if (want('onboarding_steps')) state.onboarding_steps = []
  if (want('user_settings')) state.user_settings = userSettings
  if (!options.capabilities.user_settings_object) {
    if (want('update_display_settings')) Object.assign(state, legacySettingsState(userSettings, 'display'))
    if (want('update_global_notifications')) Object.assign(state, legacySettingsState(userSettings, 'notifications'))
  }
  if (want('user_topic')) state.user_topics = user ? await fetchUserTopics(prisma, user.id) : []
  if (!options.capabilities.empty_topic_name) showEmptyTopicByName(state)
  // Legacy key, left out only for clients that name user_topic in fetch_event_types (upstream); they get no muted_topics events either.
  if (want('muted_topics') && (options.fetchEventTypes === null || !want('user_topic'))) state.muted_topics = user ? await fetchMutedTopics(prisma, user.id) : []
  if (want('user_status')) {
    state.user_status = user ? await fetchUserStatuses(prisma, realm.id) : {}
  }
  return state
}

async function realmUserState(ctx: RegisterStateContext, options: RegisterStateOptions): Promise<Record<string, unknown>> {
  const { prisma, realm, user } = ctx
  let users: UserDict[]
  if (user) {
    // The accessible users; without user_list_incomplete a restricted guest
    // also gets an "Unknown user" placeholder for each of the others, as upstream.
    users = await getUsers({ prisma, realm, user }, { clientExtavatar: options.clientExtavatar, includeCustomProfileFields: true })
    if (!options.capabilities.user_list_incomplete) users = [...users, ...(await inaccessibleUsers(ctx, user))].sort((a, b) => a.user_id - b.user_id)
  } else {
    const [rows, billingAdmins] = await Promise.all([prisma.user.findMany({ where: { realmId: realm.id }, orderBy: { id: 'asc' } }), getBillingAdminIds(prisma, realm.id)])
    users = rows.map((row) => presentUser({ ...row, isBillingAdmin: billingAdmins.has(row.id) }, null, { clientExtavatar: false, includeCustomProfileFields: true, realm }))
  }
  // user_avatar_url_field_optional lets the server leave avatar_url out, and
  // the client then asks GET /avatar/{user_id}. Upstream does so only for
  // long-term-idle users; Roost has neither those nor that endpoint, so it
  // always sends the field (null still means "computed by the client").
  const strip = (u: UserDict) => {
    const { is_active: _active, ...rest } = u
    return rest
  }
  const out: Record<string, unknown> = {
    realm_users: users.filter((u) => u.is_active).map(strip),
    realm_non_active_users: users.filter((u) => !u.is_active).map(strip),
    cross_realm_bots: [],
  }
  const me = user ? users.find((u) => u.user_id === user.id) : undefined
  if (user && me) {
    const admin = isAdmin(user.role)
    Object.assign(out, {
      avatar_source: user.avatarSource,
      // The user's own avatar is always a URL, whatever client_extavatar says (upstream).
      avatar_url: avatarUrl(user),
      avatar_url_medium: avatarUrlMedium(user),
      ...(await ownPermissionFlags(prisma, realm, user, ctx.now())),
      is_admin: admin,
      is_owner: me.is_owner,
      is_moderator: isModeratorOrAbove(user.role) && !admin,
      is_guest: me.is_guest,
      is_billing_admin: me.is_billing_admin,
      user_id: user.id,
      email: user.email,
      delivery_email: user.deliveryEmail,
      full_name: user.fullName,
    })
  } else {
    Object.assign(out, { is_admin: false, is_owner: false, is_moderator: false, is_guest: true, is_billing_admin: false, user_id: 0 })
  }
  return out
}

/** Placeholders for the users of the realm `user` may not access (none unless it is a restricted guest). */
async function inaccessibleUsers(ctx: RegisterStateContext, user: User): Promise<UserDict[]> {
  const accessible = await accessibleUserIds({ prisma: ctx.prisma, realm: ctx.realm, user })
  if (!accessible) return []
  const others = await ctx.prisma.user.findMany({ where: { realmId: ctx.realm.id, id: { notIn: [...accessible] } }, select: { id: true } })
  const domain = fakeEmailDomain(ctx.realm, ctx.config.externalUrl)
  return others.map((u) => inaccessibleUserDict(u.id, domain))
}

async function subscriptionState(
  ctx: RegisterStateContext,
  options: RegisterStateOptions,
  settings: UserSettings | null,
): Promise<Record<string, unknown>> {
  const { prisma, user, core } = ctx
  if (!user) return { subscriptions: [], unsubscribed: [], never_subscribed: [] }
  const rows = core?.subscriptions ?? []
  const neverRows = core?.neverSubscribed ?? []
  const subscribers = options.includeSubscribers
    ? await getSubscriberIds(prisma, [...rows.map((r) => r.streamId), ...neverRows.map((s) => s.id)])
    : undefined
  const defaults = streamNotificationDefaults(settings)
  const groups = await getStreamGroupContext(prisma, user.realmId, [...rows.map((r) => r.stream), ...neverRows])
  const grants = await groupGrantsOf(prisma, user)
  const present = (row: (typeof rows)[number]): SubscriptionObject => {
    const sub = presentSubscription(row, row.stream, groups, { subscribers: subscribers?.get(row.streamId) })
    return options.capabilities.notification_settings_null ? sub : withInheritedNotifications(sub, defaults)
  }
  return {
    subscriptions: sortByName(rows.filter((r) => r.active).map(present)),
    // A channel left that the user may no longer know of is not listed (upstream
    // gather_subscriptions_helper); leaving it sent the user a `stream` delete.
    unsubscribed: sortByName(rows.filter((r) => !r.active && canSeeStreamMetadata(user, r.stream, false, grants(r.stream))).map(present)),
    never_subscribed: sortByName(
      neverRows.filter((s) => canSeeStreamMetadata(user, s, false, grants(s))).map((s: Stream) => presentStream(s, groups, { subscribers: subscribers?.get(s.id) })),
    ),
  }
}

async function visibleStreams(ctx: RegisterStateContext, options: RegisterStateOptions): Promise<unknown[]> {
  const { prisma, realm, user } = ctx
  let streams
  if (!user) {
    const rows = await prisma.stream.findMany({ where: { realmId: realm.id, deactivated: false, isWebPublic: true } })
    const groups = await getStreamGroupContext(prisma, realm.id, rows)
    streams = sortByName(rows.map((s) => presentStream(s, groups)))
  } else {
    // Every channel the user may know of: public (web-public for guests), subscribed, and for
    // administrators and users whose groups grant it, private ones.
    streams = await getStreams(
      { prisma, user },
      {
        includePublic: true,
        includeWebPublic: true,
        includeSubscribed: true,
        // Every channel the user may know of (private ones for administrators and those whose groups grant it).
        includeAll: true,
        includeDefault: false,
        includeOwnerSubscribed: false,
        includeCanAccessContent: false,
        // Level 378: archived channels only for clients that know them.
        excludeArchived: !options.capabilities.archived_channels,
      },
    )
  }
  if (!options.includeSubscribers) return streams
  const subscribers = await getSubscriberIds(prisma, streams.map((s) => s.stream_id))
  return streams.map((s) => ({ ...s, subscribers: subscribers.get(s.stream_id) ?? [] }))
}

/** Level 334: without the empty_topic_name capability, the empty topic of unreads and topic policies is named by its display name. */
function showEmptyTopicByName(state: Record<string, unknown>): void {
  const unread = state.unread_msgs as { streams?: { topic: string }[] } | undefined
  for (const entry of unread?.streams ?? []) entry.topic = topicForClient(entry.topic, false)
  const userTopics = state.user_topics as { topic_name: string }[] | undefined
  for (const entry of userTopics ?? []) entry.topic_name = topicForClient(entry.topic_name, false)
}

/**
 * The user's own permission flags of register (upstream: membership of the realm's group
 * settings; can_subscribe_other_users is the spec's, from can_add_subscribers_group).
 */
async function ownPermissionFlags(prisma: PrismaClient, realm: Realm, user: User, now: Date): Promise<Record<string, boolean>> {
  const holds = await realmPermissionsOf(prisma, realm, user, now)
  const pub = holds('can_create_public_channel_group')
  const priv = holds('can_create_private_channel_group')
  const web = holds('can_create_web_public_channel_group')
  return {
    can_create_streams: pub || priv || web,
    can_create_public_streams: pub,
    can_create_private_streams: priv,
    can_create_web_public_streams: web,
    can_subscribe_other_users: holds('can_add_subscribers_group'),
    can_invite_others_to_realm: holds('can_invite_users_group'),
  }
}
