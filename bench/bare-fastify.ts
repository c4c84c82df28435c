// The baseline for bench/http-baseline.ts: a bare Fastify server answering
// fixed paths with fixed JSON bodies (read from the file named by argv[2]),
// with no authentication, database or plugins.
//   node dist/bench/bare-fastify.js routes.json PORT
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

const routes = JSON.parse(readFileSync(process.argv[2], 'utf8')) as Record<string, unknown>
const port = Number(process.argv[3])
const app = Fastify({ logger: false })
for (const [url, body] of Object.entries(routes)) {
  app.get(url, async () => body)
}
await app.listen({ port, host: '127.0.0.1' })
process.stdout.write(`bare-fastify: listening on ${port}\n`)
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
