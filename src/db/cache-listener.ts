// What the caches emptied by database notifications share (auth-cache.ts,
// user-data-cache.ts, queries/presence-directory.ts): the invalidation
// listener of one cache, started on first use and closed with the cache;
// whether it is up, since a cache may serve only while no notification can
// be missed; the callers waiting for it; and its connection errors.
import type { RowListener } from './row-listener.js'

export class CacheListener<C> {
  private listener: RowListener | undefined
  private report: ((error: unknown) => void) | undefined
  private readonly waiters: (() => void)[] = []
  private up = false
  private closed = false
  /** Connection errors so far. */
  errors = 0

  constructor(
    private readonly cache: C,
    private readonly listen: ((cache: C) => RowListener) | undefined,
  ) {}

  /** Whether notifications are being received and the cache is not closed. */
  get isActive(): boolean {
    return this.up && !this.closed
  }

  /** Starts the listener unless it runs, there is none, or the cache is closed. */
  start(): void {
    if (this.listener !== undefined || this.listen === undefined || this.closed) return
    this.listener = this.listen(this.cache)
  }

  /** What the listener reports; those waiting for it are released once it is up. */
  setListening(isListening: boolean): void {
    this.up = isListening && !this.closed
    if (this.up) for (const resolve of this.waiters.splice(0)) resolve()
  }

  /** Resolves once the listener is up; starts it if needed. */
  whenListening(): Promise<void> {
    this.start()
    if (this.isActive) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  /** Where connection errors are reported (the app's logger); they are counted either way. */
  reportErrorsTo(report: (error: unknown) => void): void {
    this.report = report
  }

  error(error: unknown): void {
    this.errors++
    this.report?.(error)
  }

  /** For good: the cache stops serving and the listener is closed. */
  async close(): Promise<void> {
    this.closed = true
    this.up = false
    const listener = this.listener
    this.listener = undefined
    await listener?.close()
  }
}
