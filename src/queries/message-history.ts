// GET /messages/{message_id}/history (upstream get_message_edit_history and
// fill_edit_history_entries): the message's versions, oldest first. The
// stored edit history (newest first, see actions/edit-message.ts) keeps only
// what each edit changed; each snapshot here carries the topic, content and
// rendered content right after that edit, the editor and the time, plus the
// prev_* fields and content_html_diff of what it changed. The first snapshot
// is the message as sent (topic, content, rendered_content, timestamp,
// user_id of the sender).
import { topicForClient } from '../domain/topics.js'
import type { ActionContext } from '../services.js'
import { accessMessageById } from '../access/message.js'
import { highlightHtmlDifferences } from '../domain/html-diff.js'
import { editHistoryDisabled } from '../errors.js'
import { EDIT_HISTORY_VISIBILITY, visibleEditHistory } from '../domain/message-edit.js'

interface StoredEdit {
  user_id?: number | null
  timestamp?: number
  prev_content?: string
  prev_rendered_content?: string
  prev_topic?: string
  topic?: string
  prev_stream?: number
  stream?: number
}

export type HistorySnapshot = Record<string, unknown>

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export function storedEdits(json: unknown): StoredEdit[] {
  return Array.isArray(json) ? json.filter(isRecord).map((e) => e as StoredEdit) : []
}

/** `allowEmptyTopicName` (level 334): "" may be a topic in the answer; otherwise a channel message's empty topic is shown by its display name. */
export async function getMessageHistory(ctx: ActionContext, messageId: number, allowEmptyTopicName = true): Promise<HistorySnapshot[]> {
  if (ctx.realm.messageEditHistoryVisibilityPolicy === EDIT_HISTORY_VISIBILITY.none) throw editHistoryDisabled()
  const { message } = await accessMessageById(ctx, messageId)
  let content = message.content
  let rendered = message.renderedContent
  let topic = message.topic
  const snapshots: HistorySnapshot[] = []
  for (const edit of storedEdits(message.editHistory)) {
    const snapshot: HistorySnapshot = { content, rendered_content: rendered, timestamp: edit.timestamp, topic, user_id: edit.user_id ?? null }
    if (edit.prev_topic !== undefined) {
      topic = edit.prev_topic
      snapshot.prev_topic = topic
    }
    if (edit.prev_content !== undefined) {
      snapshot.prev_content = edit.prev_content
      snapshot.prev_rendered_content = edit.prev_rendered_content ?? ''
      snapshot.content_html_diff = highlightHtmlDifferences(edit.prev_rendered_content ?? '', rendered)
      content = edit.prev_content
      rendered = edit.prev_rendered_content ?? ''
    }
    if (edit.prev_stream !== undefined) {
      snapshot.prev_stream = edit.prev_stream
      snapshot.stream = edit.stream
    }
    snapshots.push(snapshot)
  }
  snapshots.push({
    content,
    rendered_content: rendered,
    timestamp: Math.floor(message.dateSent.getTime() / 1000),
    topic,
    user_id: message.senderId,
  })
  if (message.streamId !== null && !allowEmptyTopicName) {
    for (const snapshot of snapshots) {
      for (const key of ['topic', 'prev_topic']) {
        if (typeof snapshot[key] === 'string') snapshot[key] = topicForClient(snapshot[key], false)
      }
    }
  }
  return visibleEditHistory(ctx.realm.messageEditHistoryVisibilityPolicy, snapshots.reverse())
}
