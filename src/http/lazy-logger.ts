// A request's logger bound to its user, made on first use: most requests never
// log, and creating a pino child on every request cost about a quarter of an
// empty event poll's throughput (measured with bench/events-empty-poll.ts).
// The context keeps a plain data property holding this object (an accessor
// on the context itself would turn it into a slow dictionary-mode object).
import type { FastifyBaseLogger } from 'fastify'

type Bindings = Record<string, unknown>
type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

class LazyChildLogger {
  private made: FastifyBaseLogger | undefined
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
  ) {}

  private get target(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings)
    return this.made
  }

  private call(method: Method, args: unknown[]): void {
    const target = this.target
    ;(target[method] as (...a: unknown[]) => void).apply(target, args)
  }

  get level(): string {
    return this.target.level
  }
  set level(level: string) {
    this.target.level = level
  }
  fatal(...args: unknown[]): void {
    this.call('fatal', args)
  }
  error(...args: unknown[]): void {
    this.call('error', args)
  }
  warn(...args: unknown[]): void {
    this.call('warn', args)
  }
  info(...args: unknown[]): void {
    this.call('info', args)
  }
  debug(...args: unknown[]): void {
    this.call('debug', args)
  }
  trace(...args: unknown[]): void {
    this.call('trace', args)
  }
  silent(...args: unknown[]): void {
    this.call('silent', args)
  }
  child(bindings: Bindings): FastifyBaseLogger {
    return this.target.child(bindings)
  }
}

/** `parent.child(bindings)`, created when first used. */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings): FastifyBaseLogger {
  // pino's overloaded log-method types are not expressible by a delegating
  // class; the runtime interface is the same (this is the one bridge).
  return new LazyChildLogger(parent, bindings) as unknown as FastifyBaseLogger
}
