// Waiting, in the cluster tests, for what another node learns asynchronously.
import { setImmediate as nextTurn } from 'node:timers/promises'

/** Calls `attempt` until `done` holds of its result or `deadlineMs` has passed, a turn of the event loop apart; returns the last result. */
export async function retryUntil<T>(attempt: () => Promise<T>, done: (value: T) => boolean, deadlineMs: number): Promise<T> {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    const value = await attempt()
    if (done(value) || Date.now() > deadline) return value
    await nextTurn()
  }
}
