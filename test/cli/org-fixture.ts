// An organization with one of every kind of object export and import carry,
// built the way its people would: `roost org create` / `user create`, then
// the HTTP API (channels, subscriptions, messages with topics, direct and
// group direct messages, reactions, flags, user groups, custom emoji,
// uploads, avatars, profile fields, muted topics and users, alert words,
// linkifiers, realm and personal settings).
import type { FastifyInstance } from 'fastify'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { sendMultipart, TINY_GIF, TINY_PNG } from '../support/multipart.js'
import { printed, type CliResult } from './run.js'

type Tap = Parameters<typeof expectSuccess>[0]
export interface Person {
  id: number
  deliveryEmail: string
  apiKey: string
}

export const FIXTURE_UPLOAD = Buffer.from('quarterly numbers, all of them\n')

export async function buildFixtureOrganization(
  t: Tap,
  app: FastifyInstance,
  cli: (args: string[]) => Promise<CliResult>,
  subdomain: string,
): Promise<{ owner: Person; people: Person[] }> {
  const domain = `${subdomain}.example.com`
  const made = await cli(['org', 'create', '--name', 'Export Co', '--subdomain', subdomain, '--owner-email', `boss@${domain}`, '--owner-name', 'Bea Boss'])
  if (made.code !== 0) throw new Error(made.stderr)
  const who = async (email: string, apiKey: string): Promise<Person> => {
    const me = expectSuccess(t, await as(app, { deliveryEmail: email, apiKey }).get('/users/me'))
    return { id: me.user_id as number, deliveryEmail: email, apiKey }
  }
  const owner = await who(`boss@${domain}`, printed(made.stdout, 'owner API key'))
  const people: Person[] = [owner]
  for (const [name, role] of [['ann', 'member'], ['bob', 'moderator'], ['gus', 'guest']] as const) {
    const res = await cli(['user', 'create', '--org', subdomain, '--email', `${name}@${domain}`, '--name', `${name[0]!.toUpperCase()}${name.slice(1)} Person`, '--role', role])
    if (res.code !== 0) throw new Error(res.stderr)
    people.push(await who(`${name}@${domain}`, printed(res.stdout, 'API key')))
  }
  const [, ann, bob, gus] = people as [Person, Person, Person, Person]
  const api = (p: Person) => as(app, p)

  expectSuccess(t, await api(owner).patch('/realm', { description: 'We **export** things.', mandatory_topics: true, message_content_edit_limit_seconds: 1200 }))
  expectSuccess(t, await api(owner).post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' }))
  const field = expectSuccess(t, await api(owner).post('/realm/profile_fields', { name: 'Team', field_type: 1, hint: 'Your team' })).id as number
  expectSuccess(t, await api(ann).patch('/users/me/profile_data', { data: [{ id: field, value: 'Platform' }] }))
  expectSuccess(t, await api(ann).patch('/settings', { twenty_four_hour_time: true, emojiset: 'text' }))

  expectSuccess(t, await api(owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'design', description: 'Pixels' }], principals: [owner.id, ann.id, bob.id] }))
  expectSuccess(t, await api(owner).post('/users/me/subscriptions', { subscriptions: [{ name: 'secret plans' }], invite_only: true, principals: [owner.id, bob.id] }))
  expectSuccess(t, await api(ann).post('/users/me/subscriptions', { subscriptions: [{ name: 'design' }] }))
  const secretPlans = expectSuccess(t, await api(owner).get('/get_stream_id', { stream: 'secret plans' })).stream_id as number
  expectSuccess(t, await api(owner).patch('/realm', { moderation_request_channel_id: secretPlans }))

  const upload = await sendMultipart(app, ann, 'POST', '/user_uploads', [{ name: 'file', fileName: 'numbers.txt', contentType: 'text/plain', data: FIXTURE_UPLOAD }])
  const uploadUrl = expectSuccess(t, upload).url as string
  expectSuccess(t, await sendMultipart(app, bob, 'POST', '/users/me/avatar', [{ name: 'file', fileName: 'me.png', contentType: 'image/png', data: TINY_PNG }]))
  expectSuccess(t, await sendMultipart(app, owner, 'POST', '/realm/emoji/party_parrot', [{ name: 'file', fileName: 'parrot.gif', contentType: 'image/gif', data: TINY_GIF }]))
  const reviewers = expectSuccess(t, await api(owner).post('/user_groups/create', { name: 'reviewers', description: 'Code review', members: [ann.id, bob.id] })).group_id as number
  // Group settings naming a user and a group (the creator's anonymous defaults name the owner).
  expectSuccess(t, await api(owner).post('/user_groups/create', { name: 'leads', description: 'Leads', members: [ann.id], can_join_group: reviewers, can_leave_group: { direct_members: [bob.id], direct_subgroups: [reviewers] } }))

  const send = async (p: Person, params: Record<string, unknown>): Promise<number> => expectSuccess(t, await api(p).post('/messages', params)).id as number
  const first = await send(ann, { type: 'stream', to: 'design', topic: 'logo', content: `Here are the [numbers](${uploadUrl}) for #123` })
  const second = await send(bob, { type: 'stream', to: 'design', topic: 'logo', content: 'Looks good @**Ann Person**' })
  await send(owner, { type: 'stream', to: 'design', topic: 'colors', content: 'Blue or green?' })
  await send(bob, { type: 'stream', to: 'secret plans', topic: 'launch', content: 'Next Tuesday :party_parrot:' })
  const dm = await send(ann, { type: 'direct', to: [bob.id], content: 'psst, a direct message' })
  await send(gus, { type: 'direct', to: [owner.id, ann.id], content: 'a group direct message' })
  expectSuccess(t, await api(bob).post(`/messages/${first}/reactions`, { emoji_name: 'thumbs_up' }))
  expectSuccess(t, await api(owner).post(`/messages/${first}/reactions`, { emoji_name: 'party_parrot', reaction_type: 'realm_emoji' }))
  expectSuccess(t, await api(ann).post('/messages/flags', { messages: [second], op: 'add', flag: 'read' }))
  expectSuccess(t, await api(ann).post('/messages/flags', { messages: [first, second], op: 'add', flag: 'starred' }))
  expectSuccess(t, await api(bob).post('/messages/flags', { messages: [dm], op: 'add', flag: 'read' }))
  expectSuccess(t, await api(ann).patch(`/messages/${first}`, { content: `Here are the [numbers](${uploadUrl}) for #123, edited` }))
  const design = expectSuccess(t, await api(ann).get('/get_stream_id', { stream: 'design' })).stream_id as number
  expectSuccess(t, await api(ann).post('/user_topics', { stream_id: design, topic: 'colors', visibility_policy: 1 }))
  expectSuccess(t, await api(ann).post(`/users/me/muted_users/${gus.id}`))
  expectSuccess(t, await api(bob).post('/users/me/alert_words', { alert_words: ['launch'] }))
  expectSuccess(t, await api(owner).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: design, property: 'pin_to_top', value: true }] }))
  return { owner, people }
}
