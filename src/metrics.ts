// Prometheus metrics of one node (one registry per app instance: tests build
// several apps in one process). Hot paths only bump plain numbers or a
// histogram; counts kept elsewhere (auth cache, queues, bus) and the database
// reads (backlogs, pool use) are taken when /metrics is scraped. The backlogs
// are callbacks given by whoever builds the node (node-services.ts), so this
// module depends on no worker.
import { readFileSync } from 'node:fs'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { SERVICE_FEATURE_LEVEL, SERVICE_VERSION } from './version.js'
import type { Config } from './config.js'
import type { Database } from './db/client.js'
import type { UserDataCache } from './db/user-data-cache.js'
import type { AuthCache } from './db/auth-cache.js'
import type { BusItem, EventBus } from './events/bus.js'
import type { EventQueues } from './events/queues/index.js'

/** Counts of stored work read at each scrape. */
export interface BacklogGauges {
  /** Scheduled messages due and neither sent nor failed. */
  scheduledMessagesDue: () => Promise<number>
  /** Missed-message emails stored and not yet sent. */
  missedMessageEmailsPending: () => Promise<number>
  /** Push notifications stored and not yet sent. */
  pushNotificationsPending: () => Promise<number>
}

export interface MetricSources {
  config: Config
  backlogs: BacklogGauges
  database: Pick<Database, 'pool'>
  /** Errors of the backends' background work (Redis subscriptions, queue clean-up). */
  backendErrors: () => number
  events: EventQueues
  authCache: AuthCache
  /** Any cache with the user-data cache's counters (db/user-data-cache.ts). */
  userDataCache: Pick<UserDataCache<unknown>, 'hits' | 'misses' | 'listenerErrors'>
}

/** What admission control (http/admission.ts) counts, read at each scrape. */
export interface AdmissionFigures {
  readonly inFlight: number
  readonly refused: Readonly<Record<string, number>>
  readonly releases: number
  readonly eventLoopDelayMs: number
}

/** Roost's own version (package.json; also from dist/src), or 'unknown'. */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name?: string; version?: string }
    return pkg.name === 'roost' && pkg.version ? pkg.version : 'unknown'
  } catch {
    return 'unknown'
  }
}

/** Limits whose refusals roost_rate_limit_refusals_total counts. */
export type RateLimitName = 'api_user' | 'api_ip' | 'login'

export class Metrics {
  readonly registry = new Registry()
  /** Time of each PostgreSQL statement (PostgreSQL only). */
  readonly dbQueryDuration: Histogram
  /** Time of each Redis command of the shared connection (Redis only). */
  readonly redisCommandDuration: Histogram<'command'>
  private readonly messagesSent: Counter<'type'>
  private readonly loginRefusals: Counter<'code'>
  private readonly rateLimitRefusals: Counter<'limit'>
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>
  private readonly published: Counter<'type'>
  private readonly fanout: Histogram
  /** Missed-message emails the mail server did not accept (each is retried later). */
  readonly missedMessageEmailFailures: Counter
  readonly pushNotificationFailures: Counter

  constructor(sources: MetricSources) {
    const registers = [this.registry]
    // Process metrics cost a little (an event-loop monitor, GC observers): only when /metrics is served.
    if (sources.config.metricsToken) collectDefaultMetrics({ register: this.registry, prefix: 'roost_' })
    this.httpDuration = new Histogram({
      name: 'roost_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    })
    new Gauge({
      name: 'roost_build_info',
      help: 'Always 1; the labels name the running build: Roost\'s version, the commit it was built from (ROOST_COMMIT, else unknown), the API version and feature level it speaks, and Node.js\' version.',
      labelNames: ['version', 'commit', 'api_version', 'feature_level', 'node_version'],
      registers,
    }).set({ version: packageVersion(), commit: sources.config.buildCommit ?? 'unknown', api_version: SERVICE_VERSION, feature_level: String(SERVICE_FEATURE_LEVEL), node_version: process.version }, 1)
    this.dbQueryDuration = new Histogram({
      name: 'roost_db_query_duration_seconds',
      help: 'Time of each PostgreSQL statement, from the pool client\'s query call to its result (waiting for a connection excluded).',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    })
    this.redisCommandDuration = new Histogram({
      name: 'roost_redis_command_duration_seconds',
      help: 'Time of each Redis command on the node\'s shared connection, by command, from being handed to the client to its reply (blocking reads and subscriptions excluded).',
      labelNames: ['command'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    })
    this.messagesSent = new Counter({ name: 'roost_messages_sent_total', help: 'Messages sent through this node, by type (stream or direct).', labelNames: ['type'], registers })
    this.loginRefusals = new Counter({
      name: 'roost_login_refusals_total',
      help: 'Password logins (POST /fetch_api_key, the login page) refused, by error code (AUTHENTICATION_FAILED, RATE_LIMIT_HIT, USER_DEACTIVATED…).',
      labelNames: ['code'],
      registers,
    })
    this.rateLimitRefusals = new Counter({
      name: 'roost_rate_limit_refusals_total',
      help: 'Requests refused with 429 by a rate limit: the per-user (api_user) or per-address (api_ip) API limit, or the password-attempt limits (login).',
      labelNames: ['limit'],
      registers,
    })
    this.published = new Counter({ name: 'roost_events_published_total', help: 'Events published to the bus by this node, by event type.', labelNames: ['type'], registers })
    this.fanout = new Histogram({
      name: 'roost_event_fanout_users',
      help: 'Users an event was published to (fan-out size).',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
      registers,
    })
    const { events, authCache, userDataCache, backendErrors } = sources
    new Gauge({
      name: 'roost_event_queue_held_polls',
      help: 'Long-polls (GET /events) held open by this node.',
      registers,
      collect() {
        this.set(events.heldPolls)
      },
    })
    new Counter({
      name: 'roost_event_queues_registered_total',
      help: 'Event queues registered through this node.',
      registers,
      collect() {
        this.reset()
        this.inc(events.registeredQueues)
      },
    })
    new Counter({
      name: 'roost_events_delivered_total',
      help: 'Events (heartbeats excluded) handed to clients by this node\'s GET /events answers.',
      registers,
      collect() {
        this.reset()
        this.inc(events.deliveredEvents)
      },
    })
    new Counter({
      name: 'roost_bus_errors_total',
      help: 'Errors of the Redis event bus and queue store (source="bus") and of the invalidation listeners of the authentication cache (source="auth_cache_listener") and the user data cache (source="user_data_cache_listener").',
      labelNames: ['source'],
      registers,
      collect() {
        this.reset()
        this.inc({ source: 'bus' }, backendErrors())
        this.inc({ source: 'auth_cache_listener' }, authCache.listenerErrors)
        this.inc({ source: 'user_data_cache_listener' }, userDataCache.listenerErrors)
      },
    })
    new Counter({
      name: 'roost_auth_cache_lookups_total',
      help: 'Authentication lookups (API key, organization) answered from the cache (result="hit") or the database (result="miss").',
      labelNames: ['result'],
      registers,
      collect() {
        this.reset()
        this.inc({ result: 'hit' }, authCache.hits)
        this.inc({ result: 'miss' }, authCache.misses)
      },
    })
    new Counter({
      name: 'roost_user_data_cache_reads_total',
      help: 'Reads of GET /users/me\'s per-user rows answered from the cache (result="hit") or the database (result="miss").',
      labelNames: ['result'],
      registers,
      collect() {
        this.reset()
        this.inc({ result: 'hit' }, userDataCache.hits)
        this.inc({ result: 'miss' }, userDataCache.misses)
      },
    })
    new Gauge({
      name: 'roost_scheduled_messages_due',
      help: 'Scheduled messages whose time has come and that are neither sent nor failed (the delivery backlog).',
      registers,
      async collect() {
        this.set(await sources.backlogs.scheduledMessagesDue())
      },
    })
    new Gauge({
      name: 'roost_missed_message_emails_pending',
      help: 'Missed-message email notifications stored and not yet sent (waiting for their batching period, claimed, or waiting to be retried).',
      registers,
      async collect() {
        this.set(await sources.backlogs.missedMessageEmailsPending())
      },
    })
    this.missedMessageEmailFailures = new Counter({
      name: 'roost_missed_message_email_failures_total',
      help: 'Missed-message emails this node failed to hand to the mail server (each stays queued and is retried with backoff).',
      registers,
    })
    new Gauge({
      name: 'roost_push_notifications_pending',
      help: 'Push notifications stored and not yet sent (due, claimed, or waiting to be retried).',
      registers,
      async collect() {
        this.set(await sources.backlogs.pushNotificationsPending())
      },
    })
    this.pushNotificationFailures = new Counter({
      name: 'roost_push_notification_failures_total',
      help: 'Push notifications this node failed to hand to a push provider (each stays queued and is retried with backoff).',
      registers,
    })
    const pool = sources.database.pool
    if (pool) {
      new Gauge({
        name: 'roost_db_pool_connections',
        help: 'PostgreSQL connection pool: connections open (state="total"), idle (state="idle"), and queries waiting for one (state="waiting").',
        labelNames: ['state'],
        registers,
        collect() {
          this.set({ state: 'total' }, pool.totalCount)
          this.set({ state: 'idle' }, pool.idleCount)
          this.set({ state: 'waiting' }, pool.waitingCount)
        },
      })
    }
  }

  /** The admission control of this node's app (http/admission.ts): requests in flight, refusals, sampled figures. */
  watchAdmission(admission: AdmissionFigures): void {
    const registers = [this.registry]
    new Gauge({
      name: 'roost_http_requests_in_flight',
      help: 'Requests this node is serving (held long-polls and the health and metrics endpoints not counted).',
      registers,
      collect() {
        this.set(admission.inFlight)
      },
    })
    new Counter({
      name: 'roost_admission_refusals_total',
      help: 'Requests refused with 503 because the node was past an admission limit, by limit (in_flight, event_loop_delay, heap_used).',
      labelNames: ['reason'],
      registers,
      collect() {
        this.reset()
        for (const [reason, count] of Object.entries(admission.refused)) this.inc({ reason }, count)
      },
    })
    new Counter({
      name: 'roost_admission_poll_releases_total',
      help: 'Times this node answered its held long-polls early with a heartbeat because it was past an admission limit.',
      registers,
      collect() {
        this.reset()
        this.inc(admission.releases)
      },
    })
    new Gauge({
      name: 'roost_admission_event_loop_delay_seconds',
      help: 'Event-loop delay at the last admission sample (the mean over the sample interval, or the sampling timer\'s lateness if larger).',
      registers,
      collect() {
        this.set(admission.eventLoopDelayMs / 1000)
      },
    })
  }

  messageSent(type: 'stream' | 'direct', count = 1): void {
    this.messagesSent.inc({ type }, count)
  }

  loginRefused(code: string): void {
    this.loginRefusals.inc({ code })
  }

  rateLimitRefused(limit: RateLimitName): void {
    this.rateLimitRefusals.inc({ limit })
  }

  /** Counts one bus item (called by the counting bus wrapper). */
  eventPublished(item: BusItem): void {
    this.published.inc({ type: item.event.type })
    this.fanout.observe(item.userIds.length)
  }
}

/** The bus as actions see it: every publish is counted, everything else is the node's bus. */
export function countingBus(bus: EventBus, metrics: Metrics): EventBus {
  return {
    publish(item) {
      metrics.eventPublished(item)
      return bus.publish(item)
    },
    async publishMany(items) {
      for (const item of items) metrics.eventPublished(item)
      if (bus.publishMany) return bus.publishMany(items)
      for (const item of items) await bus.publish(item)
    },
    subscribe: (onItem) => bus.subscribe(onItem),
    check: () => bus.check(),
    close: () => bus.close(),
  }
}
