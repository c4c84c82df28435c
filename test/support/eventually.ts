// Waiting for what happens asynchronously (another node, a background loop,
// a process starting): the one helper the tests poll with, instead of fixed
// sleeps and loops of their own.
import { setImmediate as nextTurn, setTimeout as delay } from 'node:timers/promises'

export interface EventuallyOptions<T> {
  /** How long to keep trying (default 10 s): past it, `eventually` throws. */
  timeoutMs?: number
  /** Pause between attempts (default 0: the next turn of the event loop). */
  intervalMs?: number
  /** Whether a result is the awaited one (default: truthy). */
  until?: (value: T) => boolean
  /** Added to the error on time-out (a server's output, say). */
  detail?: () => string
  /** Whether an error thrown by an attempt ends the wait with that error (default: it counts as not yet). */
  rethrow?: boolean
  /** Checked before each attempt: a message ends the wait at once with that error (a process that exited). */
  giveUp?: () => string | undefined
}

/**
 * Calls `attempt` until its result satisfies `until` and returns that result.
 * An attempt that throws counts as not yet, unless `rethrow`. After `timeoutMs` (or when
 * `giveUp` says so) it throws an error naming `what`, with the last result or
 * error.
 */
export async function eventually<T>(what: string, attempt: () => T | Promise<T>, options: EventuallyOptions<T> = {}): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 0, until = Boolean, detail, giveUp, rethrow = false } = options
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const reason = giveUp?.()
    if (reason !== undefined) throw new Error(`${what}: ${reason}${detail ? `\n${detail()}` : ''}`)
    let last: string
    try {
      const value = await attempt()
      if (until(value)) return value
      last = `last result: ${describe(value)}`
    } catch (error) {
      if (rethrow) throw error
      last = `last error: ${error instanceof Error ? error.message : String(error)}`
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (${last})${detail ? `\n${detail()}` : ''}`)
    await (intervalMs > 0 ? delay(intervalMs) : nextTurn())
  }
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? String(value) : text.length > 300 ? `${text.slice(0, 300)}…` : text
  } catch {
    return String(value)
  }
}
