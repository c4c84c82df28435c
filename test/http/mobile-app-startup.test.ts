// The startup of the current official mobile app, zulip-flutter v30.0.274,
// replayed at the feature level Roost declares (src/version.ts), and every
// key the app parses of the answers, with the type it parses (a
// non-nullable cast in the generated lib/api/model/*.g.dart is a required key;
// the fields marked TODO(server-10) are nullable only for older servers and are
// required here, since Roost declares a 10.x level):
// * GET /server_settings (lib/api/route/realm.dart);
// * POST /register exactly as lib/api/route/events.dart registerQueue sends it
//   (lib/model/store.dart passes idle_queue_timeout "mobile"; every value is
//   JSON-encoded into a form body, lib/api/core.dart encodeParameters), parsed
//   as lib/api/model/initial_snapshot.dart InitialSnapshot;
// * GET /messages as lib/model/message_list.dart fetchInitial sends it (100
//   before and after the anchor, allow_empty_topic_name) for the combined feed
//   and for a channel, parsed as GetMessagesResult and Message;
// * GET /events, the first poll of lib/model/store.dart UpdateMachine, with a
//   message event parsed as MessageEvent.
// test/http/client-startup.test.ts replays v30.0.273, the last release for servers below 10.0.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildTestApp } from '../support/app.js'
import { as, basicAuth } from '../support/client.js'
import { bodyOf, expectSuccess, type Body } from '../support/expect.js'
import { anyOf, intKeys, mapOf, matching, mismatches, oneOf, opt, type Shape } from '../support/shapes.js'
import type { User } from '../../src/db/index.js'
import { SERVICE_FEATURE_LEVEL } from '../../src/version.js'

const UA = 'ZulipFlutter/30.0.274+274 (Android 14)'
/** lib/api/core.dart: the app refuses servers below this level. */
const MIN_ALLOWED_FEATURE_LEVEL = 277

/** One request as the app puts it on the wire: every value already a string. */
async function raw(app: FastifyInstance, host: string, method: 'GET' | 'POST', path: string, fields: Record<string, string>, user?: User) {
  const headers: Record<string, string> = { host, 'user-agent': UA }
  if (user) headers.authorization = basicAuth(user.deliveryEmail, user.apiKey)
  if (method === 'GET') return app.inject({ method, url: `/api/v1${path}`, headers, query: fields })
  return app.inject({
    method,
    url: `/api/v1${path}`,
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  })
}

/** encodeParameters: each value JSON-encoded. */
const encoded = (params: Record<string, unknown>): Record<string, string> => Object.fromEntries(Object.entries(params).map(([k, v]) => [k, JSON.stringify(v)]))

const serverSettings: Shape = {
  authentication_methods: { ldap: 'bool' },
  external_authentication_methods: [{ name: 'string', display_name: 'string', display_icon: opt('string'), login_url: 'string', signup_url: 'string' }],
  zulip_feature_level: 'int',
  zulip_version: 'string',
  zulip_merge_base: 'string',
  push_notifications_enabled: 'bool',
  is_incompatible: 'bool',
  email_auth_enabled: 'bool',
  require_email_format_usernames: 'bool',
  realm_uri: 'string',
  realm_name: 'string',
  realm_icon: 'string',
  realm_description: 'string',
  realm_web_public_access_enabled: 'bool',
}

/** GroupSettingValue.fromJson: a group ID or an anonymous group. */
const groupSetting: Shape = anyOf('int', { direct_members: ['int'], direct_subgroups: ['int'] })

const user: Shape = {
  user_id: 'int',
  delivery_email: opt('string'),
  email: 'string',
  full_name: 'string',
  date_joined: 'string',
  is_active: opt('bool'), // filled in when absent
  is_bot: 'bool',
  bot_type: opt('int'),
  bot_owner_id: opt('int'),
  role: 'int',
  timezone: 'string',
  avatar_url: opt('string'), // user_avatar_url_field_optional
  avatar_version: 'int',
  profile_data: opt(mapOf({ value: 'string', rendered_value: opt('string') }, intKeys)),
  is_system_bot: opt('bool'),
}

const channel = {
  stream_id: 'int',
  name: 'string',
  is_archived: opt('bool'),
  description: 'string',
  rendered_description: 'string',
  date_created: 'int',
  first_message_id: opt('int'),
  invite_only: 'bool',
  is_web_public: 'bool',
  history_public_to_subscribers: 'bool',
  message_retention_days: opt('int'),
  topics_policy: opt('string'),
  stream_post_policy: opt(oneOf(1, 2, 3, 4)),
  folder_id: opt('int'),
  can_add_subscribers_group: opt(groupSetting),
  can_delete_any_message_group: opt(groupSetting),
  can_delete_own_message_group: opt(groupSetting),
  can_send_message_group: opt(groupSetting),
  can_subscribe_group: opt(groupSetting),
  is_recently_active: opt('bool'),
  stream_weekly_traffic: opt('int'),
} satisfies Record<string, Shape>

const register: Shape = {
  queue_id: opt('string'),
  last_event_id: 'int',
  zulip_feature_level: 'int',
  zulip_version: 'string',
  zulip_merge_base: 'string',
  alert_words: ['string'],
  custom_profile_fields: [{ id: 'int', type: 'int', order: 'int', name: 'string', hint: 'string', field_data: 'string', display_in_profile_summary: opt('bool') }],
  max_stream_name_length: 'int',
  max_topic_length: 'int',
  server_presence_ping_interval_seconds: 'int',
  server_presence_offline_threshold_seconds: 'int',
  server_typing_started_expiry_period_milliseconds: opt('int'),
  server_typing_stopped_wait_period_milliseconds: opt('int'),
  server_typing_started_wait_period_milliseconds: opt('int'),
  muted_users: [{ id: 'int' }],
  presences: mapOf({ active_timestamp: 'int', idle_timestamp: 'int' }, intKeys),
  realm_emoji: mapOf({ id: 'string', name: 'string', source_url: 'string', still_url: opt('string'), deactivated: 'bool', author_id: opt('int') }),
  realm_user_groups: [{ id: 'int', members: ['int'], direct_subgroup_ids: ['int'], name: 'string', description: 'string', is_system_group: 'bool', deactivated: opt('bool') }],
  recent_private_conversations: [{ max_message_id: 'int', user_ids: ['int'] }],
  saved_snippets: [{ id: 'int', title: 'string', content: 'string', date_created: 'int' }], // TODO(server-10)
  subscriptions: [
    {
      ...channel,
      desktop_notifications: opt('bool'),
      email_notifications: opt('bool'),
      wildcard_mentions_notify: opt('bool'),
      push_notifications: opt('bool'),
      audible_notifications: opt('bool'),
      pin_to_top: 'bool',
      is_muted: 'bool',
      color: matching(/^#[0-9a-f]{6}$/),
    },
  ],
  channel_folders: opt([{ id: 'int', name: 'string' }]), // TODO(server-11)
  unread_msgs: {
    count: 'int',
    pms: [{ other_user_id: 'int', unread_message_ids: ['int'] }],
    streams: [{ topic: 'string', stream_id: 'int', unread_message_ids: ['int'] }],
    huddles: [{ user_ids_string: 'string', unread_message_ids: ['int'] }],
    mentions: ['int'],
    old_unreads_missing: 'bool',
  },
  starred_messages: ['int'],
  streams: [channel],
  user_status: mapOf({ status_text: opt('string'), emoji_name: opt('string'), emoji_code: opt('string'), reaction_type: opt('string') }, intKeys),
  user_settings: {
    twenty_four_hour_time: opt('bool'),
    starred_message_counts: 'bool',
    display_emoji_reaction_users: 'bool',
    emojiset: 'string',
    web_inbox_show_channel_folders: opt('bool'), // TODO(server-12)
    presence_enabled: 'bool',
  },
  user_topics: [{ stream_id: 'int', topic_name: 'string', last_updated: 'int', visibility_policy: 'int' }],
  devices: opt(mapOf({}, intKeys)), // TODO(server-12)
  realm_can_delete_any_message_group: groupSetting, // TODO(server-10)
  realm_can_delete_own_message_group: groupSetting, // TODO(server-10)
  realm_delete_own_message_policy: opt(oneOf(1, 2, 3, 4, 5)),
  realm_wildcard_mention_policy: oneOf(1, 2, 3, 5, 6, 7),
  realm_topics_policy: opt('string'), // TODO(server-11)
  realm_mandatory_topics: opt('bool'),
  realm_name: 'string',
  realm_waiting_period_threshold: 'int',
  realm_message_content_delete_limit_seconds: opt('int'),
  realm_allow_message_editing: 'bool',
  realm_message_content_edit_limit_seconds: opt('int'),
  realm_enable_read_receipts: 'bool',
  realm_icon_url: 'string',
  realm_presence_disabled: 'bool',
  realm_default_external_accounts: mapOf({ name: 'string', text: 'string', hint: 'string', url_pattern: 'string' }),
  max_file_upload_size_mib: 'int',
  server_thumbnail_formats: opt([{ name: 'string', max_width: 'int', max_height: 'int', animated: 'bool', format: 'string' }]),
  server_emoji_data_url: 'string',
  event_queue_longpoll_timeout_seconds: 'int',
  realm_moderation_request_channel_id: 'int', // TODO(server-10)
  realm_empty_topic_display_name: 'string', // TODO(server-10)
  realm_users: [user],
  realm_non_active_users: [user],
  cross_realm_bots: [user],
  server_report_message_types: opt([{ key: 'string', name: 'string' }]), // TODO(server-12)
}

const messageCommon = {
  id: 'int',
  sender_id: 'int',
  timestamp: 'int',
  client: 'string',
  content: 'string',
  content_type: 'string',
  is_me_message: 'bool',
  last_edit_timestamp: opt('int'),
  edit_history: opt([{ timestamp: 'int' }]),
  reactions: [{ emoji_name: 'string', emoji_code: 'string', reaction_type: oneOf('unicode_emoji', 'realm_emoji', 'zulip_extra_emoji'), user_id: 'int' }],
  sender_email: 'string',
  sender_full_name: 'string',
  sender_realm_str: 'string',
  submessages: opt(['any']),
  flags: ['string'],
  match_content: opt('string'),
  match_subject: opt('string'),
} satisfies Record<string, Shape>

/** Message.fromJson switches on `type`. */
const messageShape = (message: Body): Shape =>
  message.type === 'stream'
    ? { ...messageCommon, type: oneOf('stream'), stream_id: 'int', subject: 'string', display_recipient: 'string' }
    : { ...messageCommon, type: oneOf('private'), display_recipient: [{ id: 'int' }] }

const messagesResult: Shape = { anchor: 'int', found_newest: 'bool', found_oldest: 'bool', found_anchor: 'bool', history_limited: 'bool', messages: ['any'] }

function check(t: Pick<Test, 'same'>, label: string, body: unknown, shape: Shape): void {
  t.same(mismatches(body, shape), [], `${label}: every key the app reads, with the type it parses`)
}

t.test(`the mobile app (zulip-flutter v30.0.274) starts against Roost at feature level ${SERVICE_FEATURE_LEVEL}`, async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember, admin } = fx.users
  const general = fx.streams.general
  // Something in every list the app parses.
  expectSuccess(t, await as(app, admin).post('/realm/profile_fields', { name: 'Team', hint: 'Your team', field_type: 1 }))
  expectSuccess(t, await as(app, admin).post('/user_groups/create', { name: 'support', description: 'Support team', members: [member.id, otherMember.id] }))
  const mention = expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'stream', to: general.name, topic: 'hello', content: `Hi @**${member.fullName}**` })).id as number
  expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'stream', to: general.name, topic: '', content: 'in the general chat' }))
  expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'private', to: [member.id], content: 'direct' }))
  expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'private', to: [member.id, admin.id], content: 'group' }))
  expectSuccess(t, await as(app, member).post(`/messages/${mention}/reactions`, { emoji_name: 'octopus' }))
  expectSuccess(t, await as(app, member).post('/messages/flags', { messages: [mention], op: 'add', flag: 'starred' }))
  expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: general.id, topic: 'hello', visibility_policy: 3 }))
  expectSuccess(t, await as(app, otherMember).post('/users/me/status', { status_text: 'on holiday', emoji_name: 'palm_tree' }))
  expectSuccess(t, await as(app, member).post('/saved_snippets', { title: 'Greeting', content: 'Hello there' }))
  expectSuccess(t, await as(app, member).post('/users/me/muted_users/' + admin.id, {}))
  await fx.newUser({ isBot: true, botOwnerId: member.id, fullName: 'Helper bot' })
  expectSuccess(t, await as(app, otherMember).post('/users/me/presence', { status: 'active', new_user_input: true }))

  const settings = bodyOf(await raw(app, fx.host, 'GET', '/server_settings', {}))
  check(t, 'GET /server_settings', settings, serverSettings)
  t.equal(settings.zulip_feature_level, SERVICE_FEATURE_LEVEL, "the level of src/version.ts")
  t.ok(settings.zulip_feature_level >= MIN_ALLOWED_FEATURE_LEVEL, 'not below the lowest level the app accepts')
  t.equal(settings.is_incompatible, false)

  const fields = encoded({
    idle_queue_timeout: 'mobile',
    apply_markdown: true,
    client_gravatar: false,
    slim_presence: true,
    client_capabilities: {
      notification_settings_null: true,
      bulk_message_deletion: true,
      user_avatar_url_field_optional: true,
      stream_typing_notifications: true,
      user_settings_object: true,
      include_deactivated_groups: true,
      empty_topic_name: true,
      individual_emoji_changes: true,
    },
  })
  const state = expectSuccess(t, await raw(app, fx.host, 'POST', '/register', fields, member))
  check(t, 'POST /register', state, register)
  t.equal(state.zulip_feature_level, SERVICE_FEATURE_LEVEL)
  t.ok(state.realm_users.length >= 5 && state.subscriptions.length > 0 && state.realm_user_groups.length > 0 && state.saved_snippets.length === 1, 'the lists are not empty')
  t.equal(state.unread_msgs.huddles.length, 1, 'the group message is unread')
  t.ok(state.unread_msgs.streams.some((s: Body) => s.topic === ''), 'the empty topic as itself (empty_topic_name)')
  t.same(state.ignored_parameters_unsupported, ['idle_queue_timeout'], 'upstream takes idle_queue_timeout only above level 372')

  // The combined feed (newest) and a channel (first unread), as fetchInitial sends them.
  for (const [label, narrow, anchor] of [['the combined feed', [], 'newest'], ['a channel', [{ operator: 'channel', operand: general.id }], 'first_unread']] as const) {
    const query = { narrow: JSON.stringify(narrow), anchor, num_before: '100', num_after: '100', allow_empty_topic_name: 'true' }
    const result = expectSuccess(t, await raw(app, fx.host, 'GET', '/messages', query, member))
    check(t, `GET /messages, ${label}`, result, messagesResult)
    for (const message of result.messages as Body[]) check(t, `GET /messages, ${label}, message ${message.id}`, message, messageShape(message))
    t.equal(result.ignored_parameters_unsupported, undefined)
    t.ok((result.messages as Body[]).length > 0)
  }
  const feed = expectSuccess(t, await raw(app, fx.host, 'GET', '/messages', { narrow: '[]', anchor: 'newest', num_before: '100', num_after: '100', allow_empty_topic_name: 'true' }, member))
  t.ok((feed.messages as Body[]).some((m) => m.id === mention && (m.reactions as Body[]).length === 1), 'the reaction, without the user object (level 328)')

  // The first poll: queue_id raw, last_event_id JSON; an event is waiting.
  expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'stream', to: general.name, topic: 'hello', content: 'while polling' }))
  const events = expectSuccess(t, await raw(app, fx.host, 'GET', '/events', { queue_id: state.queue_id, last_event_id: JSON.stringify(state.last_event_id) }, member))
  check(t, 'GET /events', events, { events: [{ id: 'int', type: 'string' }], queue_id: opt('string') })
  const message = (events.events as Body[]).find((e) => e.type === 'message')
  t.ok(message, 'the message event')
  if (message) check(t, 'the message event', { ...message.message, flags: message.flags }, messageShape(message.message))
})
