// Entry point. Tracing starts first, when the OTEL_* variables ask for it
// (tracing.ts): the modules it instruments (http, Fastify, pg, ioredis) must
// be loaded after it, so the server is imported only then.
import { startTracing } from './tracing.js'

const tracing = await startTracing()
const { runServer } = await import('./serve.js')
runServer(tracing)
