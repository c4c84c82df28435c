// Narrows: which messages a view shows. A narrow is the API's list of
// operator/operand terms; `matches` decides whether a live message belongs
// to an open view, `narrowToHash`/`hashToNarrow` are the app's addresses,
// `messageHash`/`hashToTarget` those of one message in its view.

export type Narrow =
  | { kind: 'all' }
  | { kind: 'channel'; streamId: number }
  | { kind: 'topic'; streamId: number; topic: string }
  | { kind: 'dm'; userIds: number[] }
  | { kind: 'mentioned' }
  | { kind: 'starred' }
  | { kind: 'search'; query: string }

export interface NarrowTerm { operator: string; operand: string | number | number[]; negated?: boolean }

/** The message's fields a narrow looks at. */
export interface NarrowMessage {
  id: number
  type: 'stream' | 'private'
  stream_id?: number
  subject: string
  sender_id: number
  display_recipient: string | { id: number }[]
  flags: string[]
}

/** The sorted user IDs of a direct conversation, without the user's own ID (except a self-conversation). */
export function dmKey(userIds: number[], selfId: number): string {
  const others = [...new Set(userIds)].filter((id) => id !== selfId).sort((a, b) => a - b)
  return (others.length > 0 ? others : [selfId]).join(',')
}

export function messageDmKey(message: NarrowMessage, selfId: number): string {
  const ids = Array.isArray(message.display_recipient) ? message.display_recipient.map((r) => r.id) : []
  return dmKey(ids, selfId)
}

/** The conversation a message belongs to: its topic, or its direct conversation (keyed as `dmKey`). */
export function conversationOf(message: NarrowMessage, selfId: number): Narrow {
  if (message.type === 'stream' && message.stream_id !== undefined) return { kind: 'topic', streamId: message.stream_id, topic: message.subject }
  return { kind: 'dm', userIds: messageDmKey(message, selfId).split(',').map(Number) }
}

export function narrowTerms(narrow: Narrow): NarrowTerm[] {
  switch (narrow.kind) {
    case 'all':
      return []
    case 'channel':
      return [{ operator: 'channel', operand: narrow.streamId }]
    case 'topic':
      return [{ operator: 'channel', operand: narrow.streamId }, { operator: 'topic', operand: narrow.topic }]
    case 'dm':
      return [{ operator: 'dm', operand: narrow.userIds }]
    case 'mentioned':
      return [{ operator: 'is', operand: 'mentioned' }]
    case 'starred':
      return [{ operator: 'is', operand: 'starred' }]
    case 'search':
      return parseSearch(narrow.query)
  }
}

const SEARCH_OPERATORS = new Set(['channel', 'stream', 'topic', 'sender', 'dm', 'is', 'has', 'near', 'id', 'search', 'dm-including', 'channels'])

/** Upstream's search syntax: `operator:operand` (quoted operands allowed, `-` negates), the rest free words. */
export function parseSearch(query: string): NarrowTerm[] {
  const terms: NarrowTerm[] = []
  const words: string[] = []
  const re = /(-?)([a-z-]+):(?:"([^"]*)"|(\S+))|"([^"]*)"|(\S+)/g
  for (const m of query.matchAll(re)) {
    const [, minus, operator, quoted, bare, phrase, word] = m
    if (operator !== undefined && SEARCH_OPERATORS.has(operator)) {
      const operand = quoted ?? bare ?? ''
      const term: NarrowTerm = { operator: operator === 'stream' ? 'channel' : operator, operand: operator === 'dm' ? operand : operand }
      if (minus === '-') term.negated = true
      terms.push(term)
    } else {
      words.push(phrase ?? word ?? m[0])
    }
  }
  if (words.length > 0) terms.push({ operator: 'search', operand: words.join(' ') })
  return terms
}

/** Whether a live message belongs to the narrow; undefined when only the server can tell (searches). */
export function matches(narrow: Narrow, message: NarrowMessage, selfId: number): boolean | undefined {
  switch (narrow.kind) {
    case 'all':
      return true
    case 'channel':
      return message.type === 'stream' && message.stream_id === narrow.streamId
    case 'topic':
      return message.type === 'stream' && message.stream_id === narrow.streamId && message.subject.toLowerCase() === narrow.topic.toLowerCase()
    case 'dm':
      return message.type === 'private' && messageDmKey(message, selfId) === dmKey(narrow.userIds, selfId)
    case 'mentioned':
      return message.flags.some((f) => f === 'mentioned' || f === 'stream_wildcard_mentioned' || f === 'topic_wildcard_mentioned')
    case 'starred':
      return message.flags.includes('starred')
    case 'search':
      return undefined
  }
}

/** A stable key per narrow (message lists are cached under it). */
export function narrowKey(narrow: Narrow): string {
  return narrowToHash(narrow)
}

export function narrowToHash(narrow: Narrow): string {
  switch (narrow.kind) {
    case 'all':
      return '#all'
    case 'channel':
      return `#channel/${narrow.streamId}`
    case 'topic':
      return `#channel/${narrow.streamId}/topic/${encodeURIComponent(narrow.topic)}`
    case 'dm':
      return `#dm/${[...narrow.userIds].sort((a, b) => a - b).join(',')}`
    case 'mentioned':
      return '#mentions'
    case 'starred':
      return '#starred'
    case 'search':
      return `#search/${encodeURIComponent(narrow.query)}`
  }
}

/**
 * An address: a narrow and, for a link to a message, the message the view
 * opens at. `near/ID` (upstream's link to a message) opens the narrow at the
 * message; `with/ID` (upstream's link that follows a moved message) opens
 * the conversation the message is in now.
 */
export interface Target {
  narrow: Narrow
  near?: number
  follow?: boolean
}

/** A link to a message in a view: the view's address with `/near/ID` (or `/with/ID`, which follows the message when it moves). */
export function messageHash(narrow: Narrow, id: number, operator: 'near' | 'with' = 'near'): string {
  return `${narrowToHash(narrow)}/${operator}/${id}`
}

/** The narrow of an address; undefined for anything else (the app then shows its home view). */
export function hashToNarrow(hash: string): Narrow | undefined {
  return hashToTarget(hash)?.narrow
}

/** The narrow of an address and the message it opens at (a link to a message). */
export function hashToTarget(hash: string): Target | undefined {
  let parts = hash.replace(/^#/, '').split('/')
  const int = (s: string | undefined) => (s !== undefined && /^\d{1,10}$/.test(s) ? Number(s) : undefined)
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s)
    } catch {
      return undefined
    }
  }
  // A trailing `near/ID` or `with/ID` (a topic's or a query's own slashes are encoded: the last two parts are never theirs).
  const at = parts.length >= 3 ? int(parts[parts.length - 1]) : undefined
  const operator = parts[parts.length - 2]
  if (at !== undefined && (operator === 'near' || operator === 'with')) {
    parts = parts.slice(0, -2)
    const narrow = partsToNarrow(parts, int, decode)
    return narrow && (operator === 'with' ? { narrow, near: at, follow: true } : { narrow, near: at })
  }
  const narrow = partsToNarrow(parts, int, decode)
  // The search box's `near:ID`: the rest of the query, opened at that message (all messages when nothing else is left).
  if (narrow?.kind === 'search') {
    const near = /(?:^|\s)near:(\d{1,10})(?=\s|$)/.exec(narrow.query)
    if (near) {
      const query = narrow.query.replace(near[0], ' ').replace(/\s+/g, ' ').trim()
      return { narrow: query ? { kind: 'search', query } : { kind: 'all' }, near: Number(near[1]) }
    }
  }
  return narrow && { narrow }
}

function partsToNarrow(parts: string[], int: (s: string | undefined) => number | undefined, decode: (s: string) => string | undefined): Narrow | undefined {
  switch (parts[0]) {
    case 'all':
      return { kind: 'all' }
    case 'mentions':
      return { kind: 'mentioned' }
    case 'starred':
      return { kind: 'starred' }
    case 'channel': {
      const streamId = int(parts[1])
      if (streamId === undefined) return undefined
      if (parts[2] === 'topic' && parts[3] !== undefined) {
        const topic = decode(parts.slice(3).join('/'))
        return topic === undefined ? undefined : { kind: 'topic', streamId, topic }
      }
      return { kind: 'channel', streamId }
    }
    case 'dm': {
      const ids = (parts[1] ?? '').split(',').map(int)
      if (ids.length === 0 || ids.some((id) => id === undefined)) return undefined
      return { kind: 'dm', userIds: ids as number[] }
    }
    case 'search': {
      const query = decode(parts.slice(1).join('/'))
      return query ? { kind: 'search', query } : undefined
    }
    default:
      return undefined
  }
}
