// Narrows: which messages a view shows. A narrow is the API's list of
// operator/operand terms; `matches` decides whether a live message belongs
// to an open view, `narrowToHash`/`hashToNarrow` are the app's addresses.

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

/** The narrow of an address; undefined for anything else (the app then shows its home view). */
export function hashToNarrow(hash: string): Narrow | undefined {
  const parts = hash.replace(/^#/, '').split('/')
  const int = (s: string | undefined) => (s !== undefined && /^\d{1,10}$/.test(s) ? Number(s) : undefined)
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s)
    } catch {
      return undefined
    }
  }
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
