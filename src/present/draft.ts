// Draft row → the API's draft object (also the payload of drafts events).
import type { Draft } from '../db/index.js'
import type { DraftDict } from '../events/schemas/common.js'

/** The wire type, defined by its schema in events/schemas/common.ts. */
export type { DraftDict }

export function presentDraft(draft: Draft): DraftDict {
  const type = draft.type === 'stream' || draft.type === 'private' ? draft.type : ''
  return {
    id: draft.id,
    type,
    to: [...draft.to],
    topic: draft.topic,
    content: draft.content,
    timestamp: Math.floor(draft.lastEditTime.getTime() / 1000),
  }
}
