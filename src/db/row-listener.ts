// Listens to committed changes that triggers announce with NOTIFY, on a
// connection of its own per listener:
// * roost_row_change (migration *_auth_cache_invalidation): user and realm
//   rows, payload 'u:<id>' or 'r:<id>';
// * roost_user_data (migration *_user_data_invalidation): the per-user data
//   of db/user-data-cache.ts, payload '<id>,<id>…' or '*'.
// Both kinds of connection:
// * PostgreSQL: a dedicated pg.Client, reconnected after any error with a
//   growing delay. While it is down the watcher is told so (notifications
//   are being lost) and told again once it listens anew.
// * PGlite: its listen() API on the one embedded connection.
import type { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import type { RowChange } from './row-writes.js'

export const ROW_CHANGE_CHANNEL = 'roost_row_change'

export interface RowChangeWatcher {
  /** Whether notifications are being received; after a false, some may have been lost. */
  listening(isListening: boolean): void
  /** A committed change (from any node). */
  changed(change: RowChange): void
}

export interface RowListener {
  close(): Promise<void>
}

/** 'u:12' → { table: 'user', id: 12 }; anything unexpected → all rows of both tables. */
export function parseRowChange(payload: string): RowChange[] {
  const match = /^([ur]):(\d+)$/.exec(payload)
  if (!match) return [{ table: 'user', id: 'all' }, { table: 'realm', id: 'all' }]
  return [{ table: match[1] === 'u' ? 'user' : 'realm', id: Number(match[2]) }]
}

/** '12,40' → [12, 40]; '*' or anything unexpected → 'all'. */
export function parseUserDataChange(payload: string): number[] | 'all' {
  if (!/^\d+(,\d+)*$/.test(payload)) return 'all'
  return payload.split(',').map(Number)
}

/** What one listening connection reports: its state, and each payload of its channel. */
interface ChannelWatcher {
  listening(isListening: boolean): void
  notified(payload: string): void
}

function rowChanges(watcher: RowChangeWatcher): ChannelWatcher {
  return {
    listening: (isListening) => watcher.listening(isListening),
    notified: (payload) => {
      for (const change of parseRowChange(payload)) watcher.changed(change)
    },
  }
}

export const USER_DATA_CHANNEL = 'roost_user_data'

export interface UserDataWatcher {
  /** Whether notifications are being received; after a false, some may have been lost. */
  listening(isListening: boolean): void
  /** A committed change of these users' data (from any node). */
  userDataChanged(userIds: number[] | 'all'): void
}

function userDataChanges(watcher: UserDataWatcher): ChannelWatcher {
  return {
    listening: (isListening) => watcher.listening(isListening),
    notified: (payload) => watcher.userDataChanged(parseUserDataChange(payload)),
  }
}

export interface ListenerOptions {
  /** Errors of the listening connection (PostgreSQL: each loss; PGlite: a failed start). */
  onError?: (error: unknown) => void
}

/** Starts listening in the background; the watcher hears listening(true) once LISTEN has succeeded. */
export function listenPGlite(pglite: PGlite, watcher: RowChangeWatcher, options: ListenerOptions = {}): RowListener {
  return listenPGliteChannel(pglite, ROW_CHANGE_CHANNEL, rowChanges(watcher), options)
}

/** The same for the per-user data channel. */
export function listenPGliteUserData(pglite: PGlite, watcher: UserDataWatcher, options: ListenerOptions = {}): RowListener {
  return listenPGliteChannel(pglite, USER_DATA_CHANNEL, userDataChanges(watcher), options)
}

function listenPGliteChannel(pglite: PGlite, channel: string, watcher: ChannelWatcher, options: ListenerOptions): RowListener {
  const started = pglite.listen(channel, (payload) => watcher.notified(payload)).then((unlisten) => {
    watcher.listening(true)
    return unlisten
  })
  started.catch((error: unknown) => options.onError?.(error))
  return {
    async close() {
      const unlisten = await started.catch(() => undefined)
      if (unlisten === undefined) return
      watcher.listening(false)
      if (!pglite.closed) await unlisten().catch(() => {})
    },
  }
}

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 5_000

/** Starts listening in the background; the watcher hears listening(true) once LISTEN has succeeded. */
export function listenPostgres(url: string, watcher: RowChangeWatcher, options: ListenerOptions = {}): RowListener {
  return listenPostgresChannel(url, ROW_CHANGE_CHANNEL, rowChanges(watcher), options)
}

/** The same for the per-user data channel. */
export function listenPostgresUserData(url: string, watcher: UserDataWatcher, options: ListenerOptions = {}): RowListener {
  return listenPostgresChannel(url, USER_DATA_CHANNEL, userDataChanges(watcher), options)
}

function listenPostgresChannel(url: string, channel: string, watcher: ChannelWatcher, options: ListenerOptions): RowListener {
  let closed = false
  let current: pg.Client | undefined
  let retryTimer: NodeJS.Timeout | undefined
  let retryMs = FIRST_RETRY_MS

  const lost = (client: pg.Client, error?: unknown) => {
    if (error !== undefined) options.onError?.(error)
    if (current !== client) return
    current = undefined
    watcher.listening(false)
    client.end().catch(() => {})
    scheduleRetry()
  }

  const scheduleRetry = () => {
    if (closed || retryTimer !== undefined) return
    retryTimer = setTimeout(() => {
      retryTimer = undefined
      void connect()
    }, retryMs)
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS)
  }

  const connect = async () => {
    if (closed) return
    const client = new pg.Client({ connectionString: url, keepAlive: true })
    current = client
    client.on('error', (error) => lost(client, error))
    client.on('end', () => lost(client))
    client.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined) watcher.notified(message.payload)
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${channel}`)
    } catch (error) {
      lost(client, error)
      return
    }
    if (closed || current !== client) {
      await client.end().catch(() => {})
      return
    }
    retryMs = FIRST_RETRY_MS
    watcher.listening(true)
  }

  void connect()
  return {
    async close() {
      closed = true
      if (retryTimer !== undefined) clearTimeout(retryTimer)
      const client = current
      current = undefined
      watcher.listening(false)
      if (client !== undefined) await client.end().catch(() => {})
    },
  }
}
