// Listens to the committed changes of user and realm rows that the triggers
// of migration *_auth_cache_invalidation announce (NOTIFY roost_row_change,
// payload 'u:<id>' or 'r:<id>'), on a connection of its own:
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

function deliver(watcher: RowChangeWatcher, payload: string): void {
  for (const change of parseRowChange(payload)) watcher.changed(change)
}

export async function listenPGlite(pglite: PGlite, watcher: RowChangeWatcher): Promise<RowListener> {
  const unlisten = await pglite.listen(ROW_CHANGE_CHANNEL, (payload) => deliver(watcher, payload))
  watcher.listening(true)
  return {
    async close() {
      watcher.listening(false)
      if (!pglite.closed) await unlisten().catch(() => {})
    },
  }
}

const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 5_000

export interface PgListenerOptions {
  onError?: (error: unknown) => void
}

/** Starts listening in the background; the watcher hears listening(true) once LISTEN has succeeded. */
export function listenPostgres(url: string, watcher: RowChangeWatcher, options: PgListenerOptions = {}): RowListener {
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
      if (message.channel === ROW_CHANGE_CHANNEL && message.payload !== undefined) deliver(watcher, message.payload)
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${ROW_CHANGE_CHANNEL}`)
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
