// Admission control: a node past its capacity refuses new requests at once
// (503, the error envelope, Retry-After) and finishes the ones it admitted,
// instead of queueing everything until every request times out. Three limits,
// each off at 0 (config.admission): requests in flight (counted from
// onRequest until the response closes; the long-polls of GET /events and the
// health and metrics endpoints are not counted), the event loop's delay and
// the V8 heap in use, both sampled on a timer. A long-poll costs nothing
// while it is held, and answering or refusing it only brings its client back:
// a new one is refused only while the heap is past its limit, and the held
// ones are answered with a heartbeat (the client polls again) only then, to
// give their memory back. Releasing them for a busy event loop or a full
// in-flight count would turn every held poll into a new request at the worst
// moment (a reconnect storm of thousands of polls on one node, as
// test/failure/node-loss.test.ts makes, would never settle).
//
// @fastify/under-pressure samples the same two figures, but counts no
// requests in flight, reads request.routeOptions (an object built per read)
// on every request, and its refusals bypass the error envelope; the sampling
// is twenty lines of node:perf_hooks, so it is done here.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AdmissionConfig } from '../config.js'
import { serverOverloaded } from '../errors.js'

export type RefusalReason = 'in_flight' | 'event_loop_delay' | 'heap_used'

/** Resolution of the event-loop delay histogram (node:perf_hooks reports each sample with it included). */
const RESOLUTION_MS = 10

/** Consecutive samples over the event-loop delay limit that put the node under pressure. */
const SLOW_SAMPLES = 2

/** URLs answered whatever the load: probes and scrapes must see an overloaded node as alive. */
function isExempt(url: string): boolean {
  return url.startsWith('/healthz') || url.startsWith('/readyz') || url.startsWith('/metrics')
}

/** GET /events (held long-polls) under either prefix: never counted in flight, refused only for the heap. */
function isLongPoll(request: FastifyRequest): boolean {
  if (request.method !== 'GET') return false
  const url = request.url
  return url.startsWith('/api/v1/events') || url.startsWith('/json/events')
}

export class Admission {
  /** Requests admitted and not yet answered (long-polls and exempt URLs excluded). */
  inFlight = 0
  /** The sampled figures of the last sample. */
  eventLoopDelayMs = 0
  heapUsedBytes = 0
  /** The sampled limit exceeded at the last sample, if any. */
  pressure: Exclude<RefusalReason, 'in_flight'> | null = null
  readonly refused: Record<RefusalReason, number> = { in_flight: 0, event_loop_delay: 0, heap_used: 0 }
  /** Times held long-polls were answered early. */
  releases = 0
  private readonly maxHeapUsedBytes: number
  private readonly histogram: IntervalHistogram | undefined
  private timer: NodeJS.Timeout | undefined
  private lastSampleAt = 0
  private slowSamples = 0

  constructor(
    private readonly config: AdmissionConfig,
    /** Answers every long-poll this node holds (with a heartbeat). */
    private readonly releaseHeldPolls: () => void,
  ) {
    const heapMib = config.maxHeapUsedMib ?? Math.floor((getHeapStatistics().heap_size_limit * 0.9) / (1024 * 1024))
    this.maxHeapUsedBytes = heapMib * 1024 * 1024
    if (config.maxEventLoopDelayMs > 0) {
      this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
      this.histogram.enable()
    }
  }

  get enabled(): boolean {
    return this.config.maxInFlight > 0 || this.config.maxEventLoopDelayMs > 0 || this.maxHeapUsedBytes > 0
  }

  get refusedTotal(): number {
    return this.refused.in_flight + this.refused.event_loop_delay + this.refused.heap_used
  }

  start(): void {
    if (!this.enabled || this.timer) return
    this.lastSampleAt = performance.now()
    this.timer = setInterval(() => this.sample(), this.config.sampleIntervalMs)
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
    this.histogram?.disable()
  }

  /** Reads the event loop's delay and the heap, then releases held polls while the node is over a limit. */
  sample(): void {
    const now = performance.now()
    // A loop blocked for longer than the histogram's resolution shows as this timer's own lateness
    // (the histogram may not have recorded the stall yet); a loop slowed by many callbacks, as the histogram's mean.
    const lateness = Math.max(0, now - this.lastSampleAt - this.config.sampleIntervalMs)
    this.lastSampleAt = now
    let mean = 0
    if (this.histogram) {
      if (this.histogram.count > 0) mean = Math.max(0, this.histogram.mean / 1e6 - RESOLUTION_MS)
      this.histogram.reset()
    }
    this.eventLoopDelayMs = Math.max(mean, lateness)
    this.heapUsedBytes = process.memoryUsage().heapUsed
    const { maxEventLoopDelayMs } = this.config
    // One late sample is a single long task (a large query on PGlite, a GC); two in a row, a loop that cannot keep up.
    this.slowSamples = maxEventLoopDelayMs > 0 && this.eventLoopDelayMs > maxEventLoopDelayMs ? this.slowSamples + 1 : 0
    this.pressure =
      this.slowSamples >= SLOW_SAMPLES ? 'event_loop_delay'
      : this.maxHeapUsedBytes > 0 && this.heapUsedBytes > this.maxHeapUsedBytes ? 'heap_used'
      : null
    if (this.pressure === 'heap_used') {
      this.releases++
      this.releaseHeldPolls()
    }
  }

  /** Why a new request must be refused now, or null to admit it. A long-poll is refused only for the heap. */
  refusal(longPoll: boolean): RefusalReason | null {
    if (longPoll) return this.pressure === 'heap_used' ? this.pressure : null
    if (this.pressure !== null) return this.pressure
    if (this.config.maxInFlight > 0 && this.inFlight >= this.config.maxInFlight) return 'in_flight'
    return null
  }

  /** The onRequest hook: refuse, or admit (and count until the response closes). */
  install(app: FastifyInstance): void {
    if (!this.enabled) return
    const retryAfter = this.config.retryAfterSeconds
    // A callback hook (every request): no promise per request.
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      if (isExempt(request.url)) return done()
      const longPoll = isLongPoll(request)
      const reason = this.refusal(longPoll)
      if (reason !== null) {
        this.refused[reason]++
        return done(serverOverloaded(retryAfter))
      }
      if (!longPoll) {
        this.inFlight++
        // 'close' comes once, answered or not (a client that hangs up frees its place).
        reply.raw.once('close', () => this.inFlight--)
      }
      done()
    })
    app.addHook('onClose', async () => this.stop())
    this.start()
  }
}
