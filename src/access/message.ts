// Message lookups that throw `Invalid message(s)` when the user may not read
// the message (upstream has_message_access).
import type { Services } from '../services.js'
import type { Message, Stream, Tx, User, UserMessage } from '../db/index.js'
import { invalidMessage } from '../errors.js'
import { isGuest } from '../domain/roles.js'
import { groupGrantsOf } from './stream-grants.js'

type Ctx = Pick<Services, 'prisma'> & { user: User }

export interface MessageAccess {
  message: Message
  /** The channel of a channel message. */
  stream: Stream | null
  /** The user's own copy, if they received the message (or it was added to their history). */
  userMessage: UserMessage | null
}

/**
 * May the user read a channel message they have no copy of? Only where the
 * channel's history is open to them: public channels (guests: web-public
 * ones), or private channels they are subscribed to whose history is shared
 * with subscribers. Protected history never is.
 */
export function canReadStreamHistory(user: Pick<User, 'role'>, stream: Pick<Stream, 'inviteOnly' | 'isWebPublic' | 'historyPublicToSubscribers'>, subscribed: boolean): boolean {
  if (!stream.historyPublicToSubscribers) return false
  if (stream.isWebPublic) return true
  if (!stream.inviteOnly && !isGuest(user.role)) return true
  return subscribed
}

export interface MessageAccessOptions {
  db?: Tx
  /**
   * The caller changes the message (edit, move, delete, react, edit typing):
   * a message of an archived channel is refused as one the user may not
   * read; reading it stays allowed (upstream is_modifying_message, level 360).
   */
  modifying?: boolean
}

export async function accessMessageById(ctx: Ctx, messageId: number, options: MessageAccessOptions = {}): Promise<MessageAccess> {
  const db = options.db ?? ctx.prisma
  const message = await db.message.findUnique({ where: { id: messageId } })
  if (!message || message.realmId !== ctx.user.realmId) throw invalidMessage()
  const userMessage = await db.userMessage.findUnique({ where: { userId_messageId: { userId: ctx.user.id, messageId } } })
  const stream = message.streamId === null ? null : await db.stream.findUnique({ where: { id: message.streamId } })
  if (options.modifying === true && stream?.deactivated === true) throw invalidMessage()
  if (userMessage) return { message, stream, userMessage }
  if (!stream) throw invalidMessage()
  const subscribed = (await db.subscription.count({ where: { userId: ctx.user.id, streamId: stream.id, active: true } })) > 0
  // Level 354: groups granting content access read a private channel's shared history as subscribers do.
  const granted = !subscribed && stream.inviteOnly && (await groupGrantsOf(db, ctx.user))(stream).content
  if (!canReadStreamHistory(ctx.user, stream, subscribed || granted)) throw invalidMessage()
  return { message, stream, userMessage: null }
}
