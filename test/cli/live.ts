// A throwaway PostgreSQL database and Redis key prefix with a Roost app over
// them, and the admin CLI (run in this process: run.ts) pointed at the same
// database and Redis: what a command changes reaches the app's clients as
// events, as it reaches a running cluster. `org` creates an organization
// with the CLI and returns its owner's credentials.
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { servicesOver } from '../../src/node-services.js'
import { openBackends } from '../../src/backends/index.js'
import { throwawayDatabase, type Teardown } from '../support/throwaway-db.js'
import { testConfig, TEST_REDIS_URL } from '../support/config.js'
import { printed, runCli, type CliResult } from './run.js'
import type { Services } from '../../src/services.js'
import { as } from '../support/client.js'
import { bodyOf } from '../support/expect.js'

export interface LiveCli {
  app: FastifyInstance
  services: Services
  env: Record<string, string>
  cli(args: string[], input?: string): Promise<CliResult>
  /** Creates the organization `subdomain` (owner boss@<subdomain>.example.com); throws unless it worked. */
  org(subdomain: string, name: string): Promise<{ id: number; deliveryEmail: string; apiKey: string; password: string }>
}

/** `dataDir`: where uploads are stored, for the app and the CLI alike. */
export async function liveCli(t: Teardown, options: { dataDir?: string } = {}): Promise<LiveCli> {
  const url = await throwawayDatabase(t)
  const prefix = `test:${randomUUID()}`
  const { dataDir } = options
  const env: Record<string, string> = { DATABASE_URL: url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, EXTERNAL_URL: 'http://localhost:9991', ...(dataDir ? { DATA_DIR: dataDir } : {}) }
  const cli = (args: string[], input?: string) => runCli(args, env, input)
  const migrated = await cli(['migrate'])
  if (migrated.code !== 0) throw new Error(`roost migrate failed: ${migrated.stderr}`)
  const config = testConfig({ databaseUrl: url, redisUrl: TEST_REDIS_URL, redisPrefix: prefix, rateLimiting: false, ...(dataDir ? { dataDir } : {}) })
  const database = await openDatabase({ databaseUrl: url })
  const backends = await openBackends(config)
  const services = servicesOver(config, database, backends)
  const app = await buildApp({ services })
  t.teardown(async () => {
    await app.close()
    await backends.close()
    await database.close()
  })
  const org = async (subdomain: string, name: string) => {
    const deliveryEmail = `boss@${subdomain}.example.com`
    const res = await cli(['org', 'create', '--name', name, '--subdomain', subdomain, '--owner-email', deliveryEmail, '--owner-name', 'Bea Boss'])
    if (res.code !== 0) throw new Error(`roost org create failed: ${res.stderr}`)
    const owner = { deliveryEmail, apiKey: printed(res.stdout, 'owner API key'), password: printed(res.stdout, 'owner password') }
    const me = bodyOf(await as(app, owner).get('/users/me'))
    return { ...owner, id: Number(me.user_id) }
  }
  return { app, services, env, cli, org }
}
