// Message row → the API's message dict (GET /messages, GET /messages/{id},
// the `message` event). No I/O: callers load the sender, channel, direct
// message participants and reactions.
import { createHash } from 'node:crypto'
import type { Message, Realm, Stream, User } from '../db/index.js'
import { flagsToList } from '../domain/flags.js'
import { EDIT_HISTORY_VISIBILITY, editTimestamps, shownHistoryEntry, visibleEditHistory } from '../domain/message-edit.js'
import { inaccessibleUserDict } from './user.js'
import { topicForClient } from '../domain/topics.js'

export type PresentableUser = Pick<User, 'id' | 'email' | 'deliveryEmail' | 'fullName' | 'realmId' | 'avatarSource' | 'avatarVersion' | 'avatarHash'>

export interface PresentableReaction {
  emojiName: string
  emojiCode: string
  reactionType: string
  userId: number
}

export interface PresentMessageOptions {
  /** true: content is the rendered HTML; false: the Markdown source. */
  applyMarkdown: boolean
  /** The client computes gravatar URLs itself: avatar_url is null for gravatar users. */
  clientExtavatar: boolean
  realm: Pick<Realm, 'stringId'>
  sender: PresentableUser
  /** avatarUrlOf(sender, clientExtavatar), when the caller computed it already (once per sender for many messages). */
  avatarUrl?: string | null
  /** The channel of a channel message. */
  stream?: Pick<Stream, 'id' | 'name'> | null
  /** Every participant of a direct message, the sender included. */
  recipients?: Pick<User, 'id' | 'email' | 'fullName'>[]
  reactions?: PresentableReaction[]
  /** The viewer's flag bitmask; omitted → no `flags` key (events carry flags outside the message). */
  flags?: number
  /** The realm's message_edit_history_visibility_policy (level 358): which `edit_history` entries are shown; all by default. */
  editHistoryVisibility?: number
  /** The client accepts "" as a topic (level 334); otherwise the empty topic is shown by its display name (default true). */
  allowEmptyTopicName?: boolean
}

export type MessageRow = Pick<
  Message,
  'id' | 'senderId' | 'streamId' | 'topic' | 'dmUserIds' | 'content' | 'renderedContent' | 'dateSent' | 'lastEditTime' | 'editHistory' | 'client'
>

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000)

/** Gravatar URL for gravatar users, the uploaded file otherwise (same rules as user objects). */
export function avatarUrlOf(user: PresentableUser, clientExtavatar: boolean): string | null {
  if (user.avatarSource === 'U' && user.avatarHash) {
    return `/user_avatars/${user.realmId}/${user.avatarHash}.png?version=${user.avatarVersion}`
  }
  // The client hashes sender_email, which is the real address only while everyone may see it.
  if (clientExtavatar && user.email.toLowerCase() === user.deliveryEmail.toLowerCase()) return null
  const hash = createHash('md5').update(user.deliveryEmail.trim().toLowerCase()).digest('hex')
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${user.avatarVersion}`
}

/**
 * Upstream's recipient_id is a row of its Recipient table; Roost has none.
 * Channel messages use the channel id; direct messages a stable number
 * derived from the sorted participants (the same for every message of the
 * conversation), kept above 2^30 so it rarely meets a channel id.
 */
export function dmRecipientId(dmUserIds: readonly number[]): number {
  const digest = createHash('sha1').update([...dmUserIds].sort((a, b) => a - b).join(',')).digest()
  return (1 << 30) + (digest.readUInt32BE(0) % (1 << 30))
}

/** Upstream's "a /me message": the source starts with `/me `. */
export const isMeMessage = (content: string): boolean => /^\/me\s/.test(content)

export function presentMessage(row: MessageRow, o: PresentMessageOptions): Record<string, unknown> {
  const isStream = row.streamId !== null
  const out: Record<string, unknown> = {
    id: row.id,
    sender_id: row.senderId,
    content: o.applyMarkdown ? row.renderedContent : row.content,
    recipient_id: isStream ? row.streamId : dmRecipientId(row.dmUserIds),
    timestamp: seconds(row.dateSent),
    client: row.client,
    subject: isStream ? topicForClient(row.topic, o.allowEmptyTopicName !== false) : row.topic,
    topic_links: [],
    is_me_message: isMeMessage(row.content),
    reactions: (o.reactions ?? []).map((r) => ({
      emoji_name: r.emojiName,
      emoji_code: r.emojiCode,
      reaction_type: r.reactionType,
      user_id: r.userId,
    })),
    submessages: [],
    sender_full_name: o.sender.fullName,
    sender_email: o.sender.email,
    sender_realm_str: o.realm.stringId,
    display_recipient: isStream
      ? (o.stream?.name ?? '')
      : [...(o.recipients ?? [])]
          .sort((a, b) => a.id - b.id)
          .map((u) => ({ id: u.id, email: u.email, full_name: u.fullName, is_mirror_dummy: false })),
    type: isStream ? 'stream' : 'private',
    avatar_url: o.avatarUrl !== undefined ? o.avatarUrl : avatarUrlOf(o.sender, o.clientExtavatar),
    content_type: o.applyMarkdown ? 'text/html' : 'text/x-markdown',
  }
  if (isStream) out.stream_id = row.streamId
  if (row.lastEditTime) {
    // Level 365: content edits and moves have their own timestamps; a
    // resolve or unresolve alone sets neither.
    const { lastEdit, lastMoved } = editTimestamps(row.editHistory, seconds(row.lastEditTime))
    if (lastEdit !== null) out.last_edit_timestamp = lastEdit
    if (lastMoved !== null) out.last_moved_timestamp = lastMoved
    if (Array.isArray(row.editHistory) && o.editHistoryVisibility !== EDIT_HISTORY_VISIBILITY.none) {
      out.edit_history = visibleEditHistory(o.editHistoryVisibility ?? EDIT_HISTORY_VISIBILITY.all, row.editHistory.map(shownHistoryEntry))
    }
  }
  if (o.flags !== undefined) out.flags = flagsToList(o.flags)
  return out
}

/**
 * A message dict as a viewer who may not access its sender sees it: the
 * sender's name, address and picture are those of the "Unknown user"
 * stand-in (upstream's finalize_payload without can_access_sender); the
 * sender's ID stays. Returns a copy.
 */
export function withInaccessibleSender(message: Record<string, unknown>, emailDomain: string): Record<string, unknown> {
  const stand = inaccessibleUserDict(Number(message.sender_id), emailDomain)
  return { ...message, sender_full_name: stand.full_name, sender_email: stand.email, avatar_url: stand.avatar_url }
}
