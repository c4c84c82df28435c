// What the caches emptied by database notifications share (auth-cache.ts,
// user-data-cache.ts, queries/presence-directory.ts): the invalidation
// listener of one cache, started on first use and closed with the cache;
// whether it is up, since a cache may serve only while no notification can
// be missed, and is emptied whenever that changes; the callers waiting for
// it; and its connection errors.
import type { RowListener } from './row-listener.js'

export abstract class NotifiedCache<Self> {
  private listener: RowListener | undefined
  private report: ((error: unknown) => void) | undefined
  private readonly waiters: (() => void)[] = []
  private up = false
  private closed = false
  private errors = 0

  protected constructor(private readonly listen: ((cache: Self) => RowListener) | undefined) {}

  /** Empties the cache; anything being read when this is called must not be stored. */
  abstract flush(): void

  /** Whether the cache serves: notifications are being received and it is not closed. */
  get isActive(): boolean {
    return this.up && !this.closed
  }

  /** Connection errors of the invalidation listener so far. */
  get listenerErrors(): number {
    return this.errors
  }

  /** The invalidation listener is up (true) or down (false); either way, flush. */
  listening(isListening: boolean): void {
    this.up = isListening && !this.closed
    this.flush()
    if (this.up) for (const resolve of this.waiters.splice(0)) resolve()
  }

  /** Resolves once the cache serves (its listener is up); starts the listener if needed. */
  whenListening(): Promise<void> {
    this.startListening()
    if (this.isActive) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  /** Where the listener's connection errors are reported (the app's logger); they are counted either way. */
  reportErrorsTo(report: (error: unknown) => void): void {
    this.report = report
  }

  listenerError(error: unknown): void {
    this.errors++
    this.report?.(error)
  }

  /** Stops serving for good and closes the listener. */
  async close(): Promise<void> {
    this.closed = true
    this.up = false
    this.flush()
    const listener = this.listener
    this.listener = undefined
    await listener?.close()
  }

  /** Starts the listener unless it runs, there is none, or the cache is closed. */
  protected startListening(): void {
    if (this.listener !== undefined || this.listen === undefined || this.closed) return
    this.listener = this.listen(this as unknown as Self)
  }
}
