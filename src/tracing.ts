// OpenTelemetry tracing, off unless the standard OTEL_* variables ask for it:
// OTEL_TRACES_EXPORTER (other than `none`) or an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and not
// OTEL_SDK_DISABLED=true. Everything else (protocol, headers, sampler,
// service name, resource attributes, batching) is the OpenTelemetry Node
// SDK's own reading of the OTEL_* variables. Spans come from the HTTP server
// (and outbound requests), Fastify's request lifecycle (@fastify/otel), pg
// and ioredis. The request's ID (http/request-id.ts: the caller's
// X-Request-Id or a fresh UUID, the `request_id` of its log lines) is the
// `roost.request_id` attribute of its HTTP server span and of Fastify's
// request span, so a trace and the request's log lines find each other.
// server.ts starts this before it imports anything instrumented:
// the SDK patches pg and ioredis as they load, and the import hook registered
// here lets it see the ES-module imports of them.
// Nothing here is imported when tracing is off.
import type { NodeSDK } from '@opentelemetry/sdk-node'

type Env = Record<string, string | undefined>

/** Whether the OTEL_* variables switch tracing on. */
export function tracingEnabled(env: Env = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((e) => e.trim().toLowerCase()).filter(Boolean)
  if (exporters.length > 0) return !exporters.every((e) => e === 'none')
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim())
}

/** The span attribute that holds the request's ID (the log lines' `request_id`). */
export const REQUEST_ID_ATTRIBUTE = 'roost.request_id'

/** URLs whose requests make no spans: probes and scrapes every few seconds. */
const UNTRACED = /^\/(healthz|readyz|metrics)(\?|$)/

export interface Tracing {
  /** Exports the spans still buffered and stops (on shutdown). */
  shutdown(): Promise<void>
}

/** Starts the SDK when the environment asks for it; undefined otherwise. */
export async function startTracing(env: Env = process.env): Promise<Tracing | undefined> {
  if (!tracingEnabled(env)) return undefined
  // The SDK would also start metric and log exporters by default; Roost's metrics are Prometheus' (/metrics).
  env.OTEL_METRICS_EXPORTER ??= 'none'
  env.OTEL_LOGS_EXPORTER ??= 'none'
  const { register } = await import('node:module')
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url)
  const [{ NodeSDK: Sdk }, { HttpInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }, { FastifyOtelInstrumentation }, { resourceFromAttributes }, { context, trace }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@fastify/otel'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/api'),
  ])
  const sdk: NodeSDK = new Sdk({
    // OTEL_SERVICE_NAME, when set, names the service instead.
    ...(env.OTEL_SERVICE_NAME ? {} : { resource: resourceFromAttributes({ 'service.name': 'roost' }) }),
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => UNTRACED.test(request.url ?? '') }),
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        ignorePaths: (route) => UNTRACED.test(route.url),
        // Called as Fastify's request span starts, in the context of the HTTP server span (its parent): Fastify has named the request by then.
        requestHook: (span, request) => {
          span.setAttribute(REQUEST_ID_ATTRIBUTE, request.id)
          trace.getSpan(context.active())?.setAttribute(REQUEST_ID_ATTRIBUTE, request.id)
        },
      }),
      // Statement text is recorded (it holds placeholders, never values); connection-pool checkouts are not spans of their own.
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new IORedisInstrumentation(),
    ],
  })
  sdk.start()
  return { shutdown: () => sdk.shutdown() }
}
