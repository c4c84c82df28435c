// Message events: message, update_message, delete_message,
// update_message_flags, reaction, typing, attachment (upstream-behaviour §2).
import { builder } from './built.js'
import { Type, type Static } from 'typebox'
import { eventObject, MessageDict, Nullable } from './common.js'

/**
 * What a queue receives. The bus item carries the message with its Markdown
 * source in `raw_content` and no `flags`; events/queues/filter.ts renders per
 * queue and adds the recipient's flags (and the sender's local_message_id).
 */
export const MessageEventSchema = eventObject({
  type: Type.Literal('message'),
  message: MessageDict,
  flags: Type.Array(Type.String()),
  local_message_id: Type.Optional(Type.String()),
})
export type MessageEvent = {
  type: 'message'
  message: Record<string, unknown> & { raw_content: string }
}
export const messageEvent = builder((message: MessageEvent['message']): MessageEvent => ({ type: 'message', message }))

export const UpdateMessageEventSchema = eventObject({
  type: Type.Literal('update_message'),
  user_id: Nullable(Type.Integer()),
  edit_timestamp: Type.Integer(),
  message_id: Type.Integer(),
  message_ids: Type.Array(Type.Integer()),
  rendering_only: Type.Boolean(),
  flags: Type.Array(Type.String()),
  stream_name: Type.Optional(Type.String()),
  stream_id: Type.Optional(Type.Integer()),
  orig_content: Type.Optional(Type.String()),
  orig_rendered_content: Type.Optional(Type.String()),
  content: Type.Optional(Type.String()),
  rendered_content: Type.Optional(Type.String()),
  is_me_message: Type.Optional(Type.Boolean()),
  propagate_mode: Type.Optional(Type.Union([Type.Literal('change_one'), Type.Literal('change_later'), Type.Literal('change_all')])),
  orig_subject: Type.Optional(Type.String()),
  subject: Type.Optional(Type.String()),
  topic_links: Type.Optional(Type.Array(Type.Unknown())),
  new_stream_id: Type.Optional(Type.Integer()),
})
export type UpdateMessageEvent = Static<typeof UpdateMessageEventSchema>
/** The fields every update_message has; actions add the content and move fields that apply. */
export const updateMessageEvent = builder((base: Omit<UpdateMessageEvent, 'type'>): UpdateMessageEvent => ({ type: 'update_message', ...base }))

export const DeleteMessageEventSchema = Type.Union([
  eventObject({
    type: Type.Literal('delete_message'),
    message_type: Type.Literal('stream'),
    message_ids: Type.Array(Type.Integer()),
    stream_id: Type.Integer(),
    topic: Type.String(),
  }),
  eventObject({ type: Type.Literal('delete_message'), message_type: Type.Literal('private'), message_ids: Type.Array(Type.Integer()) }),
  // Legacy form, one per message, for queues without bulk_message_deletion.
  eventObject({
    type: Type.Literal('delete_message'),
    message_type: Type.Literal('stream'),
    message_id: Type.Integer(),
    stream_id: Type.Integer(),
    topic: Type.String(),
  }),
  eventObject({ type: Type.Literal('delete_message'), message_type: Type.Literal('private'), message_id: Type.Integer() }),
])
export type DeleteMessageEvent =
  | { type: 'delete_message'; message_type: 'stream'; message_ids: number[]; stream_id: number; topic: string }
  | { type: 'delete_message'; message_type: 'private'; message_ids: number[] }
export const deleteStreamMessagesEvent = builder((messageIds: number[], streamId: number, topic: string): DeleteMessageEvent => ({
  type: 'delete_message',
  message_ids: messageIds,
  message_type: 'stream',
  stream_id: streamId,
  topic,
}))

/** Upstream level 351: someone is editing a message's content (POST /messages/{id}/typing). */
export const TypingEditMessageEventSchema = eventObject({
  type: Type.Literal('typing_edit_message'),
  op: Type.Union([Type.Literal('start'), Type.Literal('stop')]),
  sender_id: Type.Integer(),
  message_id: Type.Integer(),
  recipient: Type.Union([
    Type.Object({ type: Type.Literal('channel'), channel_id: Type.Integer(), topic: Type.String() }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('direct'), user_ids: Type.Array(Type.Integer()) }, { additionalProperties: false }),
  ]),
})
export type TypingEditMessageEvent = Static<typeof TypingEditMessageEventSchema>
export const typingEditMessageEvent = builder(
  (op: 'start' | 'stop', senderId: number, messageId: number, recipient: TypingEditMessageEvent['recipient']): TypingEditMessageEvent => ({
    type: 'typing_edit_message',
    op,
    sender_id: senderId,
    message_id: messageId,
    recipient,
  }),
)
export const deletePrivateMessageEvent = builder((messageId: number): DeleteMessageEvent => ({ type: 'delete_message', message_ids: [messageId], message_type: 'private' }))

const UnreadDetails = Type.Union([
  Type.Object(
    { type: Type.Literal('stream'), stream_id: Type.Integer(), topic: Type.String(), unmuted_stream_msg: Type.Boolean(), mentioned: Type.Optional(Type.Literal(true)) },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal('private'), user_ids: Type.Array(Type.Integer()), mentioned: Type.Optional(Type.Literal(true)) }, { additionalProperties: false }),
])
export type UnreadMessageDetails = Static<typeof UnreadDetails>

export const UpdateMessageFlagsEventSchema = eventObject({
  type: Type.Literal('update_message_flags'),
  op: Type.Union([Type.Literal('add'), Type.Literal('remove')]),
  operation: Type.Union([Type.Literal('add'), Type.Literal('remove')]),
  flag: Type.String(),
  messages: Type.Array(Type.Integer()),
  all: Type.Boolean(),
  /** Only for op remove of flag read. */
  message_details: Type.Optional(Type.Record(Type.String(), UnreadDetails)),
})
export type UpdateMessageFlagsEvent = Static<typeof UpdateMessageFlagsEventSchema>
export const updateMessageFlagsEvent = builder(function updateMessageFlagsEvent(
  op: 'add' | 'remove',
  flag: string,
  messages: number[],
  options: { all?: boolean; messageDetails?: Record<string, UnreadMessageDetails> } = {},
): UpdateMessageFlagsEvent {
  return {
    type: 'update_message_flags',
    op,
    operation: op,
    flag,
    messages,
    all: options.all ?? false,
    ...(options.messageDetails !== undefined ? { message_details: options.messageDetails } : {}),
  }
})

export const ReactionEventSchema = eventObject({
  type: Type.Literal('reaction'),
  op: Type.Union([Type.Literal('add'), Type.Literal('remove')]),
  user_id: Type.Integer(),
  user: Type.Object({ user_id: Type.Integer(), email: Type.String(), full_name: Type.String() }, { additionalProperties: false }),
  message_id: Type.Integer(),
  emoji_name: Type.String(),
  emoji_code: Type.String(),
  reaction_type: Type.String(),
})
export type ReactionEvent = Static<typeof ReactionEventSchema>
export const reactionEvent = builder(function reactionEvent(
  op: 'add' | 'remove',
  user: { id: number; email: string; fullName: string },
  messageId: number,
  emoji: { emojiName: string; emojiCode: string; reactionType: string },
): ReactionEvent {
  return {
    type: 'reaction',
    op,
    user_id: user.id,
    user: { user_id: user.id, email: user.email, full_name: user.fullName },
    message_id: messageId,
    emoji_name: emoji.emojiName,
    emoji_code: emoji.emojiCode,
    reaction_type: emoji.reactionType,
  }
})

const TypingUser = Type.Object({ user_id: Type.Integer(), email: Type.String() }, { additionalProperties: false })
export const TypingEventSchema = Type.Union([
  eventObject({
    type: Type.Literal('typing'),
    op: Type.Union([Type.Literal('start'), Type.Literal('stop')]),
    message_type: Type.Literal('direct'),
    sender: TypingUser,
    recipients: Type.Array(TypingUser),
  }),
  eventObject({
    type: Type.Literal('typing'),
    op: Type.Union([Type.Literal('start'), Type.Literal('stop')]),
    message_type: Type.Literal('stream'),
    sender: TypingUser,
    stream_id: Type.Integer(),
    topic: Type.String(),
  }),
])
export type TypingEvent = Static<typeof TypingEventSchema>
type TypingUserDict = Static<typeof TypingUser>
export const directTypingEvent = builder((op: 'start' | 'stop', sender: TypingUserDict, recipients: TypingUserDict[]): TypingEvent => ({
  type: 'typing',
  op,
  message_type: 'direct',
  sender,
  recipients,
}))
export const streamTypingEvent = builder((op: 'start' | 'stop', sender: TypingUserDict, streamId: number, topic: string): TypingEvent => ({
  type: 'typing',
  op,
  message_type: 'stream',
  sender,
  stream_id: streamId,
  topic,
}))

const AttachmentDict = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  path_id: Type.String(),
  size: Type.Integer(),
  create_time: Type.Integer(),
  messages: Type.Array(Type.Object({ id: Type.Integer(), date_sent: Type.Integer() })),
})
// `update` goes to the owner when a message starts linking an upload (as
// upstream's do_claim_attachments) and, beyond upstream, when an edit stops
// linking it, so that the owner's list of the upload's messages stays true.
export const AttachmentEventSchema = Type.Union([
  eventObject({ type: Type.Literal('attachment'), op: Type.Literal('add'), attachment: AttachmentDict, upload_space_used: Type.Integer() }),
  eventObject({ type: Type.Literal('attachment'), op: Type.Literal('update'), attachment: AttachmentDict, upload_space_used: Type.Integer() }),
  eventObject({ type: Type.Literal('attachment'), op: Type.Literal('remove'), attachment: Type.Object({ id: Type.Integer() }), upload_space_used: Type.Integer() }),
])
export type AttachmentEvent = Static<typeof AttachmentEventSchema>
export const attachmentEvent = builder((op: 'add' | 'update', attachment: Static<typeof AttachmentDict>, uploadSpaceUsed: number): AttachmentEvent => ({
  type: 'attachment',
  op,
  attachment,
  upload_space_used: uploadSpaceUsed,
}))
export const attachmentRemoveEvent = builder((attachmentId: number, uploadSpaceUsed: number): AttachmentEvent => ({
  type: 'attachment',
  op: 'remove',
  attachment: { id: attachmentId },
  upload_space_used: uploadSpaceUsed,
}))
