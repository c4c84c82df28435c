// Draft row → the API's draft object (also the payload of drafts events).
import type { Draft } from '../db/index.js'

export interface DraftDict {
  id: number
  type: '' | 'stream' | 'private'
  to: number[]
  topic: string
  content: string
  timestamp: number
}

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
