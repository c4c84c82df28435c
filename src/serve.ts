// The server (started by server.ts): configuration, services, bootstrap, listen; drain and close on SIGTERM.
import { mkdirSync } from 'node:fs'
import { ConfigError, loadConfig, type Config } from './config.js'
import { openServices } from './node-services.js'
import { buildApp } from './app.js'
import { pino } from 'pino'
import { loggerOptions } from './http/observability.js'
import { RedisStartupError } from './backends/index.js'
import { bootstrapRealm } from './actions/bootstrap-realm.js'
import { startScheduledDelivery } from './scheduler/delivery.js'
import { startStreamActivityChecks } from './scheduler/stream-activity.js'
import { startMissedMessageEmails } from './notifications/delivery.js'
import { startPushNotifications } from './notifications/push-delivery.js'
import { DataDirBusyError, lockDataDir } from './db/data-dir-lock.js'
import type { Tracing } from './tracing.js'
import { startupWarnings } from './startup-warnings.js'

function readConfig(): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`roost: configuration error: ${error.message}\n`)
      process.exit(1)
    }
    throw error
  }
}

async function main(tracing: Tracing | undefined): Promise<void> {
  const config = readConfig()
  if (!config.databaseUrl) mkdirSync(config.dataDir, { recursive: true })
  // Embedded: DATA_DIR/roost.pid keeps the admin CLI (and a second server) off the PGlite files.
  const lock = config.databaseUrl ? undefined : lockDataDir(config.dataDir, 'server')
  if (lock) process.on('exit', () => lock.release())
  // One logger for the whole process: the backends log through it before the app exists.
  const logger = pino(loggerOptions(config.logLevel) as pino.LoggerOptions)
  for (const warning of startupWarnings(config)) logger.warn(warning)
  const services = await openServices(config, { log: (msg) => process.stdout.write(`roost: ${msg}\n`), backendLog: logger })
  const created = await bootstrapRealm(services)
  if (created?.printPassword) {
    process.stdout.write(
      [
        '',
        `roost: created the organization '${created.realmName}' at ${created.url}`,
        `roost: owner email:    ${created.email}`,
        `roost: owner password: ${created.password}`,
        `roost: owner API key:  ${created.apiKey}`,
        '',
      ].join('\n') + '\n',
    )
  }
  const app = await buildApp({ services, loggerInstance: logger })
  await app.listen({ port: config.port, host: config.host, backlog: config.listenBacklog })
  const delivery = startScheduledDelivery(services, { log: app.log })
  const missedMessageEmails = startMissedMessageEmails(services, { log: app.log })
  const pushNotifications = startPushNotifications(services, { log: app.log })
  const streamActivity = startStreamActivityChecks(services, { log: app.log })
  process.stdout.write(`roost: serving ${config.externalUrl}/api/v1 on http://${config.host}:${config.port}\n`)

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    // A request that never settles (or a connection that never closes) must not keep a stopping node alive:
    // exit within Kubernetes' default 30 s grace period either way.
    setTimeout(() => {
      app.log.error({ signal, seconds: SHUTDOWN_DEADLINE_SECONDS }, 'shutdown did not finish in time; exiting')
      process.exit(1)
    }, SHUTDOWN_DEADLINE_SECONDS * 1000).unref()
    try {
      // Answer held long-polls first (app.close also does, via preClose) so clients reconnect to another node.
      services.events.drain()
      await delivery.stop()
      await missedMessageEmails.stop()
      await pushNotifications?.stop()
      await streamActivity.stop()
      await app.close()
      await services.close()
      // The spans of the last requests are exported before the process exits.
      await tracing?.shutdown().catch(() => undefined)
    } finally {
      process.exit(0)
    }
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

/** How long a stopping node drains before it exits regardless. */
const SHUTDOWN_DEADLINE_SECONDS = 25

/** Runs the server; `tracing` (when on) is flushed at shutdown. */
export function runServer(tracing: Tracing | undefined): void {
  main(tracing).catch((error: unknown) => {
    if (error instanceof DataDirBusyError || error instanceof RedisStartupError) {
      process.stderr.write(`roost: ${error.message}\n`)
      process.exit(1)
    }
    process.stderr.write(`roost: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  })
}
