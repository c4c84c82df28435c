// A child logger made on first use: most requests never log, and creating a
// pino child on every request cost about a quarter of an empty event poll's
// throughput (measured with bench/events-empty-poll.ts). Two stand in for
// pino children: Fastify's per-request logger (its childLoggerFactory, app.ts)
// and the handler's logger bound to the user (route.ts). Reading the level
// makes no child, nor does a call below it: the child would have the parent's
// level (or the one it was given) and drop the call.
// The context keeps a plain data property holding this object (an accessor
// on the context itself would turn it into a slow dictionary-mode object).
import type { FastifyBaseLogger } from 'fastify'
import type { ChildLoggerOptions } from 'pino'

type Bindings = Record<string, unknown>
type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/** pino's level numbers. */
const LEVEL_VALUES: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 }

class LazyChildLogger {
  private made: FastifyBaseLogger | undefined
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions | undefined,
  ) {}

  private get target(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options)
    return this.made
  }

  private call(method: Method, args: unknown[]): void {
    if (this.made === undefined) {
      // pino's silent() writes nothing, and a level not named (silent) lets nothing through.
      const value = LEVEL_VALUES[method]
      if (value === undefined || value < (LEVEL_VALUES[this.level] ?? Infinity)) return
    }
    const target = this.target
    ;(target[method] as (...a: unknown[]) => void).apply(target, args)
  }

  get level(): string {
    return this.made?.level ?? this.options?.level ?? this.parent.level
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

/** `parent.child(bindings, options)`, created when first used. */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
  // pino's overloaded log-method types are not expressible by a delegating
  // class; the runtime interface is the same (this is the one bridge).
  return new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger
}
