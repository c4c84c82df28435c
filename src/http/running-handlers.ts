// The route handlers still running. A stopping node waits for them before it
// closes what they use (event queues, the database): a client that goes away
// mid-request closes its connection, so the HTTP server may finish closing
// while that request's handler is still inside a transaction.

/** How long close waits for running handlers before it goes on regardless. */
export const HANDLERS_SETTLE_TIMEOUT_MS = 20_000

export class RunningHandlers {
  private readonly running = new Set<Promise<unknown>>()

  /** Runs `handler`, counted until it settles. */
  track<T>(handler: Promise<T>): Promise<T> {
    this.running.add(handler)
    const forget = () => this.running.delete(handler)
    handler.then(forget, forget)
    return handler
  }

  get count(): number {
    return this.running.size
  }

  /** Resolves once every handler running now has settled, or after `timeoutMs`; true when they all settled. */
  async settled(timeoutMs = HANDLERS_SETTLE_TIMEOUT_MS): Promise<boolean> {
    if (this.running.size === 0) return true
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
    })
    const all = Promise.allSettled([...this.running]).then(() => true)
    try {
      return await Promise.race([all, timeout])
    } finally {
      clearTimeout(timer)
    }
  }
}
