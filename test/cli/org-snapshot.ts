// What an organization looks like through the API, with every ID replaced by
// what it names (a user's email, a channel's or group's name, an upload's
// file name and bytes), so two servers holding the same organization under
// different IDs give equal snapshots. Secrets (API keys) are not part of it.
import type { FastifyInstance } from 'fastify'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'

type Tap = Parameters<typeof expectSuccess>[0]
type Obj = Record<string, unknown>
export interface Viewer {
  deliveryEmail: string
  apiKey: string
}

const pick = (o: Obj, keys: string[]): Obj => Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]))

export async function snapshot(t: Tap, app: FastifyInstance, owner: Viewer, people: Viewer[]): Promise<Obj> {
  const api = (p: Viewer) => as(app, p)
  const members = expectSuccess(t, await api(owner).get('/users', { include_custom_profile_fields: true })).members as Obj[]
  const emailOf = new Map(members.map((m) => [m.user_id as number, m.email as string]))
  const streams = expectSuccess(t, await api(owner).get('/streams', { include_all: true })).streams as Obj[]
  const streamName = new Map(streams.map((s) => [s.stream_id as number, s.name as string]))
  const groups = expectSuccess(t, await api(owner).get('/user_groups')).user_groups as Obj[]
  const groupName = new Map(groups.map((g) => [g.id as number, g.name as string]))
  const fields = expectSuccess(t, await api(owner).get('/realm/profile_fields')).custom_fields as Obj[]
  const fieldName = new Map(fields.map((f) => [String(f.id), f.name as string]))
  const emojiList = Object.values(expectSuccess(t, await api(owner).get('/realm/emoji')).emoji as Record<string, Obj>)
  const emojiName = new Map(emojiList.map((e) => [String(e.id), e.name as string]))
  const groupSetting = (v: unknown): unknown => {
    if (typeof v === 'number') return groupName.get(v)
    const anonymous = v as { direct_members: number[]; direct_subgroups: number[] }
    return { members: anonymous.direct_members.map((id) => emailOf.get(id)).sort(), subgroups: anonymous.direct_subgroups.map((id) => groupName.get(id)).sort() }
  }
  const uploads = new Map<string, string>()
  const fixUploads = async (html: string): Promise<string> => {
    const paths = [...html.matchAll(/\/user_uploads\/(\d+\/[^\s"')]+)/g)].map((m) => m[1] as string)
    for (const p of paths) {
      if (!uploads.has(p)) {
        const res = await app.inject({ method: 'GET', url: `/user_uploads/${p}`, headers: { authorization: `Basic ${Buffer.from(`${owner.deliveryEmail}:${owner.apiKey}`).toString('base64')}`, host: 'acme.localhost' } })
        uploads.set(p, `upload:${p.split('/').pop()}:${res.statusCode}:${res.rawPayload.toString('base64')}`)
      }
    }
    return html.replace(/\/user_uploads\/(\d+\/[^\s"')]+)/g, (_, p: string) => uploads.get(p) as string)
  }
  const mapIdsInHtml = (html: string): string =>
    html
      .replace(/data-user-id="(\d+)"/g, (_, id: string) => `data-user="${emailOf.get(Number(id))}"`)
      .replace(/data-stream-id="(\d+)"/g, (_, id: string) => `data-stream="${streamName.get(Number(id))}"`)
      .replace(/data-user-group-id="(\d+)"/g, (_, id: string) => `data-group="${groupName.get(Number(id))}"`)

  const out: Obj = {}
  out.users = members
    .map((m) => ({
      ...pick(m, ['email', 'full_name', 'role', 'is_bot', 'is_active', 'timezone', 'date_joined', 'is_billing_admin', 'bot_type']),
      avatar: typeof m.avatar_url === 'string' && m.avatar_url.startsWith('/user_avatars/') ? 'uploaded' : 'gravatar',
      profile: Object.fromEntries(Object.entries((m.profile_data ?? {}) as Record<string, Obj>).map(([id, v]) => [fieldName.get(id), v.value])),
      bot_owner: m.bot_owner_id === undefined || m.bot_owner_id === null ? null : emailOf.get(m.bot_owner_id as number),
    }) as Obj)
    .sort((a, b) => String(a.email).localeCompare(String(b.email)))
  out.streams = streams
    .map((s) => ({
      ...pick(s, ['name', 'description', 'rendered_description', 'invite_only', 'is_web_public', 'history_public_to_subscribers', 'date_created', 'message_retention_days', 'is_archived']),
      settings: Object.fromEntries(Object.entries(s).filter(([k]) => k.startsWith('can_') && k.endsWith('_group')).map(([k, v]) => [k, groupSetting(v)])),
    }) as Obj)
    .sort((a, b) => String(a.name).localeCompare(String(b.name)))
  out.groups = groups
    .map((g) => ({
      ...pick(g, ['name', 'description', 'is_system_group', 'deactivated']),
      members: ((g.members ?? []) as number[]).map((id) => emailOf.get(id)).sort(),
      subgroups: ((g.direct_subgroup_ids ?? []) as number[]).map((id) => groupName.get(id)).sort(),
      settings: Object.fromEntries(Object.entries(g).filter(([k]) => k.startsWith('can_')).map(([k, v]) => [k, groupSetting(v)])),
    }) as Obj)
    .sort((a, b) => String(a.name).localeCompare(String(b.name)))
  out.fields = fields.map((f) => pick(f, ['name', 'hint', 'type', 'order', 'field_data', 'display_in_profile_summary', 'required']))
  out.emoji = emojiList.map((e) => ({ ...pick(e, ['name', 'deactivated']), author: emailOf.get(e.author_id as number) }))
  out.linkifiers = ((expectSuccess(t, await api(owner).get('/realm/linkifiers')).linkifiers ?? []) as Obj[]).map((l) => pick(l, ['pattern', 'url_template']))

  const register = expectSuccess(t, await api(owner).post('/register', { fetch_event_types: ['realm'] }))
  out.realm = Object.fromEntries(
    Object.entries(register)
      .filter(([k]) => k.startsWith('realm_') && !['realm_icon_url', 'realm_logo_url', 'realm_night_logo_url'].includes(k))
      .map(([k, v]) => [k, k.endsWith('_group') ? groupSetting(v) : k.endsWith('_stream_id') || k.endsWith('_channel_id') ? streamName.get(v as number) : v]),
  )

  out.people = {}
  for (const p of people) {
    const mine: Obj = {}
    const me = expectSuccess(t, await api(p).post('/register', { fetch_event_types: ['user_settings', 'alert_words', 'muted_users', 'user_topic', 'subscription'] }))
    mine.settings = me.user_settings
    mine.alert_words = me.alert_words
    mine.muted_users = ((me.muted_users ?? []) as Obj[]).map((m) => emailOf.get(m.id as number))
    mine.user_topics = ((me.user_topics ?? []) as Obj[]).map((u) => ({ stream: streamName.get(u.stream_id as number), topic: u.topic_name, policy: u.visibility_policy, last_updated: u.last_updated }))
    mine.subscriptions = ((me.subscriptions ?? []) as Obj[])
      .map((s) => ({ ...pick(s, ['name', 'color', 'pin_to_top', 'is_muted', 'desktop_notifications', 'email_notifications']), subscribers: ((s.subscribers ?? []) as number[]).map((id) => emailOf.get(id)).sort() }) as Obj)
      .sort((a, b) => String(a.name).localeCompare(String(b.name)))
    const messages = expectSuccess(t, await api(p).get('/messages', { anchor: 'oldest', num_before: 0, num_after: 1000, narrow: [] })).messages as Obj[]
    mine.messages = []
    for (const m of messages) {
      ;(mine.messages as Obj[]).push({
        ...pick(m, ['subject', 'timestamp', 'sender_email', 'type', 'last_edit_timestamp']),
        content: mapIdsInHtml(await fixUploads(m.content as string)),
        flags: ((m.flags ?? []) as string[]).slice().sort(),
        recipient: typeof m.display_recipient === 'string' ? m.display_recipient : ((m.display_recipient ?? []) as Obj[]).map((r) => r.email).sort(),
        reactions: ((m.reactions ?? []) as Obj[]).map((r) => ({ name: r.emoji_name, type: r.reaction_type, code: r.reaction_type === 'realm_emoji' ? emojiName.get(String(r.emoji_code)) : r.emoji_code, user: emailOf.get(r.user_id as number) })),
        edits: await Promise.all(((m.edit_history ?? []) as Obj[]).map(async (e) => ({ ...pick(e, ['timestamp']), prev_content: typeof e.prev_content === 'string' ? await fixUploads(e.prev_content) : e.prev_content, user: emailOf.get(e.user_id as number) }))),
      })
    }
    ;(out.people as Obj)[p.deliveryEmail] = mine
  }
  return out
}
