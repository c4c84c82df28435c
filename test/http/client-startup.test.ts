// The startup requests of three unmodified clients, replayed exactly (the
// parameters and their encodings, user agents), and every key each client
// reads of the answers at startup, with the type it parses:
// * the mobile app, zulip-flutter v30.0.273 (the last release for servers
//   below 10.0): lib/api/route/realm.dart, events.dart, users.dart and the
//   generated lib/api/model/*.g.dart (a non-nullable cast is a required key);
// * the terminal client, zulip-terminal 0.7.0: zulipterminal/model.py
//   (Model.__init__, _register_desired_events, get_all_users…), helper.py
//   (classify_unread_counts), through the Python bindings;
// * the Python bindings, zulip 0.9.1: Client.__init__ (asserts zulip_version),
//   call_on_each_event (register, then long-poll events).
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildTestApp } from '../support/app.js'
import { as, basicAuth } from '../support/client.js'
import { bodyOf, expectSuccess, type Body } from '../support/expect.js'
import { intKeys, mapOf, matching, mismatches, nullable, oneOf, opt, type Shape } from '../support/shapes.js'
import type { User } from '../../src/db/index.js'

const FLUTTER_UA = 'ZulipFlutter/30.0.273+273 (Android 14)'
const TERMINAL_UA = 'ZulipTerminal/0.7.0 Linux-6.1.0-x86_64-with-glibc2.36 (Debian GNU/Linux; 12)'
const PYTHON_UA = 'ZulipPython/0.9.1 (Debian GNU/Linux; 12)'

/** One request as the client puts it on the wire: every value already a string. */
async function raw(app: FastifyInstance, host: string, method: 'GET' | 'POST', path: string, fields: Record<string, string>, ua: string, user?: User) {
  const headers: Record<string, string> = { host, 'user-agent': ua }
  if (user) headers.authorization = basicAuth(user.deliveryEmail, user.apiKey)
  if (method === 'GET') return app.inject({ method, url: `/api/v1${path}`, headers, query: fields })
  return app.inject({
    method,
    url: `/api/v1${path}`,
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  })
}

// ---------------------------------------------------------------- zulip-flutter

const flutterServerSettings: Shape = {
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

const flutterUser: Shape = {
  user_id: 'int',
  delivery_email: opt('string'),
  email: 'string',
  full_name: 'string',
  date_joined: 'string',
  is_active: opt('bool'),
  is_bot: 'bool',
  bot_type: opt('int'),
  bot_owner_id: opt('int'),
  role: 'int',
  timezone: 'string',
  avatar_url: opt('string'),
  avatar_version: 'int',
  profile_data: opt(mapOf({ value: 'string', rendered_value: opt('string') }, intKeys)),
  is_system_bot: opt('bool'),
}

const flutterChannel = {
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
  stream_post_policy: opt(oneOf(1, 2, 3, 4)),
  stream_weekly_traffic: opt('int'),
} satisfies Record<string, Shape>

const flutterRegister: Shape = {
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
  subscriptions: [
    {
      ...flutterChannel,
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
  unread_msgs: {
    count: 'int',
    pms: [{ other_user_id: 'int', unread_message_ids: ['int'] }],
    streams: [{ topic: 'string', stream_id: 'int', unread_message_ids: ['int'] }],
    huddles: [{ user_ids_string: 'string', unread_message_ids: ['int'] }],
    mentions: ['int'],
    old_unreads_missing: 'bool',
  },
  starred_messages: ['int'],
  streams: [flutterChannel],
  user_status: mapOf({ status_text: opt('string'), emoji_name: opt('string'), emoji_code: opt('string'), reaction_type: opt('string') }, intKeys),
  user_settings: {
    twenty_four_hour_time: opt('bool'),
    starred_message_counts: 'bool',
    display_emoji_reaction_users: 'bool',
    emojiset: 'string',
    presence_enabled: 'bool',
  },
  user_topics: [{ stream_id: 'int', topic_name: 'string', last_updated: 'int', visibility_policy: oneOf(0, 1, 2, 3) }],
  realm_delete_own_message_policy: opt(oneOf(1, 2, 3, 4, 5)),
  realm_wildcard_mention_policy: oneOf(1, 2, 3, 5, 6, 7),
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
  event_queue_longpoll_timeout_seconds: 'int',
  server_emoji_data_url: 'string',
  realm_moderation_request_channel_id: opt('int'),
  realm_empty_topic_display_name: opt('string'),
  realm_users: [flutterUser],
  realm_non_active_users: [flutterUser],
  cross_realm_bots: [flutterUser],
}

const flutterPresence: Shape = {
  presence_last_update_id: opt('int'),
  server_timestamp: opt('number'),
  presences: mapOf({ active_timestamp: 'int', idle_timestamp: 'int' }, intKeys),
}

// ---------------------------------------------------------------- zulip-terminal

const TERMINAL_FETCH_EVENT_TYPES = [
  'realm',
  'presence',
  'subscription',
  'message',
  'starred_messages',
  'update_message_flags',
  'muted_topics',
  'realm_user',
  'realm_user_groups',
  'update_global_notifications',
  'update_display_settings',
  'user_settings',
  'realm_emoji',
  'zulip_version',
]
const TERMINAL_EVENT_TYPES = [
  'message',
  'update_message',
  'reaction',
  'subscription',
  'typing',
  'update_message_flags',
  'update_global_notifications',
  'update_display_settings',
  'user_settings',
  'realm_emoji',
]

const terminalRegister: Shape = {
  result: oneOf('success'),
  queue_id: 'string',
  last_event_id: 'int',
  max_message_id: 'int',
  zulip_version: 'string',
  zulip_feature_level: 'int',
  user_id: 'int',
  email: 'string',
  full_name: 'string',
  realm_name: 'string',
  // Legacy format (no slim_presence): by email, then by client, plus "aggregated".
  presences: mapOf(mapOf({ status: 'string', timestamp: 'int' })),
  realm_users: [{ user_id: 'int', full_name: 'string', email: 'string' }],
  cross_realm_bots: [{ user_id: 'int', full_name: 'string', email: 'string' }],
  subscriptions: [
    {
      name: 'string',
      stream_id: 'int',
      color: matching(/^#[0-9a-fA-F]{3,6}$/),
      description: 'string',
      pin_to_top: 'bool',
      in_home_view: 'bool',
      desktop_notifications: nullable('bool'),
      invite_only: 'bool',
      is_web_public: opt('bool'),
      message_retention_days: nullable('int'),
      subscribers: ['int'],
    },
  ],
  realm_message_retention_days: nullable('int'),
  muted_topics: [['any']],
  realm_user_groups: [{ id: 'int', name: 'string' }],
  realm_emoji: mapOf({ name: 'string', deactivated: 'bool' }),
  user_settings: { send_private_typing_notifications: 'bool' },
  twenty_four_hour_time: 'bool',
  pm_content_in_desktop_notifications: 'bool',
  unread_msgs: {
    mentions: ['int'],
    pms: [{ sender_id: 'int', unread_message_ids: ['int'] }],
    streams: [{ stream_id: 'int', topic: 'string', unread_message_ids: ['int'] }],
    huddles: [{ user_ids_string: 'string', unread_message_ids: ['int'] }],
  },
  max_stream_name_length: opt('int'),
  max_topic_length: opt('int'),
  max_message_length: opt('int'),
  starred_messages: ['int'],
  realm_allow_message_editing: 'bool',
  realm_message_content_edit_limit_seconds: nullable('int'),
  realm_allow_edit_history: 'bool',
}

const terminalMessages: Shape = {
  result: oneOf('success'),
  anchor: 'int',
  found_newest: 'bool',
  messages: [{ id: 'int', sender_id: 'int', content: 'string', type: oneOf('stream', 'private'), timestamp: 'int', flags: ['string'] }],
}

const terminalPresence: Shape = { result: oneOf('success'), presences: mapOf(mapOf({ status: 'string', timestamp: 'int' })) }

// ---------------------------------------------------------------- python bindings

const pythonServerSettings: Shape = { zulip_version: 'string', zulip_feature_level: opt('int') }
const pythonRegister: Shape = { result: oneOf('success'), queue_id: 'string', last_event_id: 'int' }
const pythonEvents: Shape = { result: oneOf('success'), events: [{ id: 'int', type: 'string' }] }

function check(t: Pick<Test, 'same'>, label: string, body: Body, shape: Shape): void {
  t.same(mismatches(body, shape), [], `${label}: every key the client reads, with the type it parses`)
}

t.test('unmodified clients start against Roost', async (t) => {
  const { app, fx } = await buildTestApp(t)
  const { member, otherMember, admin } = fx.users
  // Something in every list the clients parse: a custom profile field, a user
  // group, unread channel, direct and group messages, a star, a topic preference,
  // a status, a bot owned by the member.
  expectSuccess(t, await as(app, admin).post('/realm/profile_fields', { name: 'Team', hint: 'Your team', field_type: 1 }))
  expectSuccess(t, await as(app, admin).post('/user_groups/create', { name: 'support', description: 'Support team', members: [member.id, otherMember.id] }))
  const streamMessage = expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'stream', to: 'general', topic: 'hello', content: 'Hi @**' + member.fullName + '**' })).id as number
  expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'private', to: [member.id], content: 'direct' }))
  expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'private', to: [member.id, admin.id], content: 'group' }))
  expectSuccess(t, await as(app, member).post('/messages/flags', { messages: [streamMessage], op: 'add', flag: 'starred' }))
  expectSuccess(t, await as(app, member).post('/user_topics', { stream_id: fx.streams.general.id, topic: 'hello', visibility_policy: 3 }))
  expectSuccess(t, await as(app, otherMember).post('/users/me/status', { status_text: 'on holiday', emoji_name: 'palm_tree' }))
  await fx.newUser({ isBot: true, botOwnerId: member.id, fullName: 'Helper bot' })
  expectSuccess(t, await as(app, otherMember).post('/users/me/presence', { status: 'active', new_user_input: true }))

  t.test('the mobile app (zulip-flutter)', async (t) => {
    const settings = bodyOf(await raw(app, fx.host, 'GET', '/server_settings', {}, FLUTTER_UA))
    check(t, 'GET /server_settings', settings, flutterServerSettings)
    const fields = {
      idle_queue_timeout: JSON.stringify('mobile'),
      apply_markdown: 'true',
      client_gravatar: 'false',
      slim_presence: 'true',
      client_capabilities: JSON.stringify({
        notification_settings_null: true,
        bulk_message_deletion: true,
        user_avatar_url_field_optional: false,
        stream_typing_notifications: true,
        user_settings_object: true,
        include_deactivated_groups: true,
        empty_topic_name: true,
      }),
    }
    const register = expectSuccess(t, await raw(app, fx.host, 'POST', '/register', fields, FLUTTER_UA, member))
    check(t, 'POST /register', register, flutterRegister)
    t.ok(register.realm_users.length >= 5 && register.subscriptions.length > 0 && register.realm_user_groups.length > 0, 'the lists are not empty')
    t.equal(register.unread_msgs.huddles.length, 1, 'the group message is unread')
    t.same(register.ignored_parameters_unsupported, ['idle_queue_timeout'], 'client_gravatar is understood')
    const events = expectSuccess(t, await raw(app, fx.host, 'GET', '/events', { queue_id: register.queue_id, last_event_id: '-1', dont_block: 'true' }, FLUTTER_UA, member))
    t.same(events.events, [])
    const presence = expectSuccess(t, await raw(app, fx.host, 'POST', '/users/me/presence', { status: 'active', new_user_input: 'true', ping_only: 'false', slim_presence: 'true' }, FLUTTER_UA, member))
    check(t, 'POST /users/me/presence', presence, flutterPresence)
  })

  t.test('the terminal client (zulip-terminal through the Python bindings)', async (t) => {
    const settings = expectSuccess(t, await raw(app, fx.host, 'GET', '/server_settings', {}, TERMINAL_UA, member))
    check(t, 'GET /server_settings', settings, pythonServerSettings)
    // _fetch_initial_data: the first messages and the registration, side by side.
    const messages = expectSuccess(
      t,
      await raw(
        app,
        fx.host,
        'GET',
        '/messages',
        { anchor: '0', num_before: '30', num_after: '10', apply_markdown: 'true', use_first_unread_anchor: 'true', client_gravatar: 'true', narrow: '[]' },
        TERMINAL_UA,
        member,
      ),
    )
    check(t, 'GET /messages', messages, terminalMessages)
    t.equal(messages.ignored_parameters_unsupported, undefined)
    const fields = {
      event_types: JSON.stringify(TERMINAL_EVENT_TYPES),
      narrow: '[]',
      fetch_event_types: JSON.stringify(TERMINAL_FETCH_EVENT_TYPES),
      client_gravatar: 'true',
      apply_markdown: 'true',
      include_subscribers: 'true',
    }
    const register = expectSuccess(t, await raw(app, fx.host, 'POST', '/register', fields, TERMINAL_UA, member))
    check(t, 'POST /register', register, terminalRegister)
    t.equal(register.ignored_parameters_unsupported, undefined)
    t.ok(Object.keys(register.presences).includes(otherMember.email), 'presences are keyed by email')
    // The poll loop's re-registration: fetch_event_types None is left out by the bindings.
    const again = expectSuccess(t, await raw(app, fx.host, 'POST', '/register', { event_types: fields.event_types, narrow: '[]', client_gravatar: 'true', apply_markdown: 'true', include_subscribers: 'true' }, TERMINAL_UA, member))
    t.type(again.max_message_id, 'number')
    t.type(again.queue_id, 'string')
    const presence = expectSuccess(t, await raw(app, fx.host, 'POST', '/users/me/presence', { status: 'active', new_user_input: 'true' }, TERMINAL_UA, member))
    check(t, 'POST /users/me/presence', presence, terminalPresence)
  })

  t.test('the Python bindings', async (t) => {
    const settings = expectSuccess(t, await raw(app, fx.host, 'GET', '/server_settings', {}, PYTHON_UA))
    check(t, 'GET /server_settings', settings, pythonServerSettings)
    // call_on_each_event(callback): register(None, None) sends only narrow=[].
    const register = expectSuccess(t, await raw(app, fx.host, 'POST', '/register', { narrow: '[]' }, PYTHON_UA, member))
    check(t, 'POST /register', register, pythonRegister)
    // With event types given explicitly, and with them as JSON null (not given).
    const typed = expectSuccess(t, await raw(app, fx.host, 'POST', '/register', { event_types: '["message"]', narrow: '[]' }, PYTHON_UA, member))
    const nulls = expectSuccess(t, await raw(app, fx.host, 'POST', '/register', { event_types: 'null', narrow: 'null', fetch_event_types: 'null' }, PYTHON_UA, member))
    t.ok('realm_users' in nulls && 'subscriptions' in nulls, 'null event_types fetch everything')
    t.equal(nulls.ignored_parameters_unsupported, undefined)
    expectSuccess(t, await as(app, otherMember).post('/messages', { type: 'stream', to: 'general', topic: 'bindings', content: 'for the poll' }))
    for (const queue of [register, typed, nulls]) {
      const events = expectSuccess(t, await raw(app, fx.host, 'GET', '/events', { queue_id: queue.queue_id, last_event_id: String(queue.last_event_id) }, PYTHON_UA, member))
      check(t, 'GET /events', events, pythonEvents)
      t.ok(events.events.some((e: Body) => e.type === 'message'), 'the message arrived')
    }
  })
})
