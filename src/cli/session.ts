// What every admin command runs in: the server's configuration and services
// (database, event bus, queue store), an operator acting as an owner of the
// chosen organization, and in embedded mode the DATA_DIR lock.
import { pino } from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { openServices, type NodeServices } from '../node-services.js'
import { lockDataDir } from '../db/data-dir-lock.js'
import { DatabaseConfigError } from '../db/client.js'
import { RedisStartupError } from '../backends/index.js'
import type { ActionContext } from '../services.js'
import type { Realm, User } from '../db/index.js'
import { ROLE } from '../domain/roles.js'
import { idMatchingLower } from '../db/exact-match.js'

/** A failure the operator can fix: printed as `roost: <message>`, exit code 1. */
export class CliError extends Error {
  override name = 'CliError'
}

export const CLI_CLIENT = 'roost-cli'

export function readConfig(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env)
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`configuration error: ${error.message}`)
    throw error
  }
}

/** Runs fn with the node's services; closes them (and frees DATA_DIR) afterwards. */
export async function withServices<T>(config: Config, fn: (services: NodeServices) => Promise<T>, options: { log?: (msg: string) => void } = {}): Promise<T> {
  const lock = config.databaseUrl ? undefined : lockDataDir(config.dataDir, 'admin command')
  try {
    let services: NodeServices
    try {
      services = await openServices(config, { log: options.log })
    } catch (error) {
      if (error instanceof DatabaseConfigError || error instanceof RedisStartupError) throw new CliError(error.message)
      throw error
    }
    try {
      return await fn(services)
    } finally {
      await services.close()
    }
  } finally {
    lock?.release()
  }
}

/**
 * The context actions run in for an organization: the operator acts with an
 * owner's rights, in the name of the organization's Notification Bot (never
 * written back: only this in-memory copy has the owner role), so every
 * change takes the same checks, transaction and events as through the API.
 */
export async function operatorContext(
  services: NodeServices,
  realm: Realm,
  io: { env: Record<string, string | undefined>; stderr: { write(text: string): unknown } },
): Promise<ActionContext> {
  if (realm.notificationBotId === null) throw new CliError(`the organization '${realm.name}' has no Notification Bot`)
  const bot: User = await services.prisma.user.findUniqueOrThrow({ where: { id: realm.notificationBotId } })
  const logger: FastifyBaseLogger = pino({ level: io.env.LOG_LEVEL ?? 'warn' }, { write: (line: string) => void io.stderr.write(line) })
  return { ...services, realm, user: { ...bot, role: ROLE.OWNER }, log: logger.child({ realm_id: realm.id }), clientName: CLI_CLIENT }
}

/** The organization at a subdomain ('' or undefined: the root organization, at EXTERNAL_URL's host). */
export async function findOrganization(services: NodeServices, subdomain: string | undefined): Promise<Realm> {
  const stringId = (subdomain ?? '').trim().toLowerCase()
  const realm = await services.prisma.realm.findUnique({ where: { stringId } })
  if (realm) return realm
  if (stringId === '') throw new CliError(`no organization at the root (${services.config.externalUrl}); pass --org <subdomain> (see 'roost org list')`)
  throw new CliError(`no organization with the subdomain '${stringId}' (see 'roost org list')`)
}

/** A user of the organization by email address (exact, case-insensitive), bots included. */
export async function findUser(ctx: Pick<ActionContext, 'prisma' | 'realm'>, email: string): Promise<User> {
  const wanted = email.trim()
  const scope = { realm_id: ctx.realm.id }
  const ids = [
    await idMatchingLower(ctx.prisma, 'user_delivery_email', scope, wanted),
    await idMatchingLower(ctx.prisma, 'user_email', scope, wanted),
  ].filter((id) => id !== undefined)
  const user = ids.length === 0 ? null : await ctx.prisma.user.findUnique({ where: { id: Math.min(...ids) } })
  if (!user) throw new CliError(`no user with the email '${wanted}' in the organization '${ctx.realm.name}'`)
  return user
}
