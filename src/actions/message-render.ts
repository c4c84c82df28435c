// Rendering message Markdown with only the data it mentions: the users,
// groups, channels and custom emoji named in the content are loaded, then the
// pure renderer runs. Shared by sending (and later editing) messages.
import type { Config } from '../config.js'
import type { PrismaClient, Realm, Tx, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import { readRealmLinkifiers } from '../db/send-queries.js'
import { realmAlertWordMatcher } from '../queries/alert-word-matcher.js'
import { Prisma } from '../db/index.js'
import {
  extractMentionCandidates,
  renderMarkdown,
  topicLinkCandidates,
  topicWithKey,
  type MentionCandidates,
  type MentionableUser,
  type RenderContext,
  type RenderResult,
} from '../domain/markdown.js'
import { canAccessStreamContent } from '../domain/stream-access.js'
import { SYSTEM_GROUP_DISPLAY_NAMES } from '../domain/system-groups.js'
import { compileLinkifier, type CompiledLinkifier, type Linkifier } from '../domain/linkifiers.js'
import { realmUrl } from '../present/realm.js'
import { accessibleAmong } from '../access/user.js'

type Db = PrismaClient | Tx

export async function loadRenderContext(
  db: Db,
  realm: Realm,
  sender: Pick<User, 'id' | 'role'>,
  /** One content, or several rendered with one context (what any of them names). */
  content: string | readonly string[],
  config: Pick<Config, 'externalUrl'>,
  /** The realm's linkifiers when the caller read them already (a send's first statement); otherwise read here. */
  linkifiers?: readonly Linkifier[],
): Promise<RenderContext> {
  const c = typeof content === 'string' ? extractMentionCandidates(content) : mentionCandidatesOfAll(content)
  const lowerNames = c.userNames.map((n) => n.toLowerCase())
  const users =
    lowerNames.length + c.userIds.length === 0
      ? []
      : await db.$queryRaw<{ id: number; full_name: string }[]>`
          SELECT id, full_name FROM user_profile
          WHERE realm_id = ${realm.id} AND is_active
            AND (lower(full_name) = ANY(${lowerNames}::text[]) OR id = ANY(${c.userIds}::int[]))`
  // A restricted guest's mention of a user it may not access stays literal, as an unknown user's does.
  const accessible = await accessibleAmong(db, realm, sender, users.map((u) => u.id))
  const usersByName = new Map<string, MentionableUser[]>()
  const usersById = new Map<number, MentionableUser>()
  for (const u of users.filter((row) => accessible.has(row.id))) {
    const m: MentionableUser = { id: u.id, fullName: u.full_name }
    usersById.set(m.id, m)
    const key = m.fullName.toLowerCase()
    usersByName.set(key, [...(usersByName.get(key) ?? []), m])
  }

  const groups =
    c.groupNames.length === 0
      ? []
      : await db.userGroup.findMany({
          // System groups too: they may be mentioned silently (level 333).
          where: { id: { in: (await idsMatchingLower(db, 'user_group_name', { realm_id: realm.id }, c.groupNames)).map((r) => r.id) }, deactivated: false, isAnonymous: false },
          select: { id: true, name: true, isSystemGroup: true },
        })

  const streams =
    c.streamNames.length === 0
      ? []
      : await db.stream.findMany({
          where: { id: { in: (await idsMatchingLower(db, 'stream_name', { realm_id: realm.id }, c.streamNames)).map((r) => r.id) }, deactivated: false },
          select: { id: true, name: true, inviteOnly: true, isWebPublic: true, historyPublicToSubscribers: true },
        })
  const subscribed = new Set(
    streams.length === 0
      ? []
      : (
          await db.subscription.findMany({
            where: { userId: sender.id, active: true, streamId: { in: streams.map((s) => s.id) } },
            select: { streamId: true },
          })
        ).map((s) => s.streamId),
  )
  const linkable = streams.filter((s) => canAccessStreamContent(sender, s, subscribed.has(s.id)))
  const topicWith = await firstTopicMessages(db, sender.id, linkable, topicLinkCandidates(c.streamNames))

  const emoji =
    c.emojiNames.length === 0
      ? []
      : await db.realmEmoji.findMany({ where: { realmId: realm.id, name: { in: c.emojiNames } } })

  return {
    usersByName,
    usersById,
    groupsByName: new Map(
      groups.map(({ isSystemGroup, ...g }) => [g.name.toLowerCase(), isSystemGroup ? { ...g, systemDisplayName: SYSTEM_GROUP_DISPLAY_NAMES[g.name] ?? g.name } : g]),
    ),
    streamsByName: new Map(linkable.map((s) => [s.name.toLowerCase(), { id: s.id, name: s.name }])),
    topicWith,
    realmEmoji: new Map(
      emoji.map((e) => [
        e.name,
        { id: String(e.id), name: e.name, sourceUrl: `/user_avatars/${realm.id}/emoji/images/${e.fileName}`, deactivated: e.deactivated },
      ]),
    ),
    realmUrl: realmUrl(realm, config.externalUrl),
    linkifiers: linkifiers === undefined ? await loadLinkifiers(db, realm.id) : compileLinkifiers(linkifiers),
  }
}

/**
 * For topic links (upstream level 347, get_first_message_for_user_in_topic):
 * the first message of each linked topic that the sender may read (the
 * channel's whole history when it is shared with subscribers, otherwise the
 * sender's own copies), in one statement whatever the number of links.
 */
async function firstTopicMessages(
  db: Db,
  senderId: number,
  linkable: { id: number; name: string; historyPublicToSubscribers: boolean }[],
  links: { streamName: string; topic: string }[],
): Promise<Map<string, number>> {
  const byName = new Map(linkable.map((s) => [s.name.toLowerCase(), s]))
  const wanted = new Map<string, { streamId: number; topic: string; shared: boolean }>()
  for (const link of links) {
    const stream = byName.get(link.streamName.toLowerCase())
    if (stream) wanted.set(topicWithKey(stream.id, link.topic), { streamId: stream.id, topic: link.topic.toLowerCase(), shared: stream.historyPublicToSubscribers })
  }
  if (wanted.size === 0) return new Map()
  const rows = [...wanted.values()]
  const found = await db.$queryRaw<{ stream_id: number; topic: string; first_id: number | null }[]>(Prisma.sql`
    SELECT t.stream_id, t.topic, (
      SELECT min(m.id) FROM message m
      WHERE m.stream_id = t.stream_id AND lower(m.topic) = t.topic
        AND (t.shared OR EXISTS (SELECT 1 FROM user_message um WHERE um.user_id = ${senderId} AND um.message_id = m.id))
    ) AS first_id
    FROM unnest(${rows.map((r) => r.streamId)}::int[], ${rows.map((r) => r.topic)}::text[], ${rows.map((r) => r.shared)}::bool[]) AS t(stream_id, topic, shared)`)
  return new Map(found.flatMap((r) => (r.first_id === null ? [] : [[topicWithKey(r.stream_id, r.topic), r.first_id] as const])))
}

function mentionCandidatesOfAll(contents: readonly string[]): MentionCandidates {
  const all = contents.map(extractMentionCandidates)
  const merged = <T>(pick: (c: MentionCandidates) => T[]) => [...new Set(all.flatMap(pick))]
  return {
    userNames: merged((c) => c.userNames),
    userIds: merged((c) => c.userIds),
    groupNames: merged((c) => c.groupNames),
    streamNames: merged((c) => c.streamNames),
    emojiNames: merged((c) => c.emojiNames),
  }
}

/** Members of each of the groups (with their subgroups' at any depth), in one statement. */
export async function membersByGroup(db: Db, groupIds: readonly number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>()
  if (groupIds.length === 0) return out
  const rows = await db.$queryRaw<{ root: number; user_id: number }[]>(Prisma.sql`
    WITH RECURSIVE g(root, id) AS (
      SELECT r, r FROM unnest(${[...new Set(groupIds)]}::int[]) AS r
      UNION
      SELECT g.root, s.subgroup_id FROM user_group_subgroup s JOIN g ON s.supergroup_id = g.id
    )
    SELECT DISTINCT g.root, m.user_id FROM user_group_member m JOIN g ON m.group_id = g.id`)
  for (const row of rows) out.set(row.root, [...(out.get(row.root) ?? []), row.user_id])
  return out
}

/** The realm's linkifiers in their order, compiled (bounded by MAX_LINKIFIERS_PER_REALM). */
export async function loadLinkifiers(db: Db, realmId: number): Promise<CompiledLinkifier[]> {
  return compileLinkifiers(await readRealmLinkifiers(db, realmId))
}

function compileLinkifiers(rows: readonly Linkifier[]): CompiledLinkifier[] {
  return rows.map((r) => compileLinkifier(r)).filter((l): l is CompiledLinkifier => l !== null)
}

export async function renderMessageContent(
  db: Db,
  realm: Realm,
  sender: Pick<User, 'id' | 'role'>,
  content: string,
  config: Pick<Config, 'externalUrl'>,
  /** As loadRenderContext's. */
  linkifiers?: readonly Linkifier[],
): Promise<RenderResult> {
  return renderMarkdown(content, await loadRenderContext(db, realm, sender, content, config, linkifiers))
}

/** Members of the groups, including members of their subgroups at any depth. */
export async function groupMemberIds(db: Db, groupIds: readonly number[]): Promise<number[]> {
  if (groupIds.length === 0) return []
  const rows = await db.$queryRaw<{ user_id: number }[]>(Prisma.sql`
    WITH RECURSIVE g(id) AS (
      SELECT unnest(${[...groupIds]}::int[])
      UNION
      SELECT s.subgroup_id FROM user_group_subgroup s JOIN g ON s.supergroup_id = g.id
    )
    SELECT DISTINCT m.user_id FROM user_group_member m JOIN g ON m.group_id = g.id`)
  return rows.map((r) => r.user_id)
}

/** Users (of `userIds`) with an alert word in `content`, by the realm's cached matcher (`node`: see queries/alert-word-matcher.ts). */
export async function alertedUserIds(db: Db, node: { realmId: number; cacheKey: object }, userIds: readonly number[], content: string): Promise<Set<number>> {
  if (userIds.length === 0) return new Set()
  const matcher = await realmAlertWordMatcher(db, node.cacheKey, node.realmId)
  return matcher.usersAlerted(content, new Set(userIds))
}
