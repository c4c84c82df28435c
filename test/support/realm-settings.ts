// Tests that change organization settings: the spec's deprecated `*_policy`
// settings are views of group settings now, so they go through PATCH /realm
// as an owner (which sets the group setting); other columns are written directly.
import type { FastifyInstance } from 'fastify'
import type { PrismaClient, User } from '../../src/db/index.js'
import { as } from './client.js'

const POLICY_COLUMNS: Record<string, string> = {
  editTopicPolicy: 'edit_topic_policy',
  moveMessagesBetweenStreamsPolicy: 'move_messages_between_streams_policy',
  deleteOwnMessagePolicy: 'delete_own_message_policy',
  wildcardMentionPolicy: 'wildcard_mention_policy',
  inviteToRealmPolicy: 'invite_to_realm_policy',
  inviteToStreamPolicy: 'invite_to_stream_policy',
  userGroupEditPolicy: 'user_group_edit_policy',
  addCustomEmojiPolicy: 'add_custom_emoji_policy',
  createWebPublicStreamPolicy: 'create_web_public_stream_policy',
  botCreationPolicy: 'bot_creation_policy',
}

/** A setter for realm columns and deprecated policies (by their old column names). */
export function realmSetter(app: FastifyInstance, owner: User, prisma: PrismaClient, realmId: number) {
  return async (data: Record<string, unknown>): Promise<void> => {
    const policies: Record<string, unknown> = {}
    const columns: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(data)) {
      const wire = POLICY_COLUMNS[key]
      if (wire) policies[wire] = value
      else columns[key] = value
    }
    if (Object.keys(columns).length > 0) await prisma.realm.update({ where: { id: realmId }, data: columns })
    if (Object.keys(policies).length > 0) {
      const res = await as(app, owner).patch('/realm', policies)
      if (res.statusCode !== 200) throw new Error(`PATCH /realm ${JSON.stringify(policies)}: ${res.body}`)
    }
  }
}
