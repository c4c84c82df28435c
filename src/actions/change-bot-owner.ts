// PATCH /bots/{bot_id}: a bot's owner or an administrator renames the bot,
// changes its role, or hands it to another active human user. All changes
// are checked first and applied in one transaction; each is a realm_user
// update `person` form to those who can access the bot (everyone: bots are
// always accessible).
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import type { User } from '../db/index.js'
import { adminFullName, canAdminUser, changeFullName, changeRole } from './update-user.js'
import { checkRoleChange } from '../domain/user-rules.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { avatarUrl } from '../present/user.js'
import { botOwnerDeactivated, botOwnerIsBot, botOwnerNotFound, insufficientPermission, noSuchBot } from '../errors.js'
import { realmUserUpdateEvent } from '../events/schemas/index.js'

export interface UpdateBotInput {
  fullName?: string
  role?: number
  botOwnerId?: number
}

export interface UpdateBotResult extends Record<string, unknown> {
  full_name: string
  avatar_url: string
  service_interface: null
  service_payload_url: null
  config_data: null
  default_sending_stream: string | null
  default_events_register_stream: string | null
  default_all_public_streams: boolean
  bot_owner?: string
}

/** Upstream access_bot_by_id: a bot of the realm (active or not) that the requester administers. */
async function accessBotById(ctx: ActionContext, botId: number): Promise<User> {
  const bot = await ctx.prisma.user.findUnique({ where: { id: botId } })
  if (!bot || bot.realmId !== ctx.realm.id || !bot.isBot) throw noSuchBot()
  if (!canAdminUser(ctx.user, bot)) throw insufficientPermission()
  return bot
}

async function checkNewOwner(ctx: ActionContext, ownerId: number): Promise<User> {
  const owner = await ctx.prisma.user.findUnique({ where: { id: ownerId } })
  if (!owner || owner.realmId !== ctx.realm.id) throw botOwnerNotFound()
  if (!owner.isActive) throw botOwnerDeactivated()
  if (owner.isBot) throw botOwnerIsBot()
  return owner
}

export async function updateBot(ctx: ActionContext, botId: number, input: UpdateBotInput): Promise<UpdateBotResult> {
  const bot = await accessBotById(ctx, botId)
  if (input.role !== undefined) checkRoleChange(ctx.user, bot, input.role)
  const fullName = adminFullName(bot, input.fullName)
  const newOwner = input.botOwnerId !== undefined ? await checkNewOwner(ctx, input.botOwnerId) : undefined

  const updated = await inTransaction(ctx, async (tx, emit) => {
    let current = await tx.user.findUniqueOrThrow({ where: { id: bot.id } })
    if (fullName !== undefined) await changeFullName(tx, ctx, emit, current, fullName)
    if (input.role !== undefined && input.role !== current.role) await changeRole(tx, ctx, emit, current, input.role)
    if (newOwner && newOwner.id !== current.botOwnerId) {
      await tx.user.update({ where: { id: bot.id }, data: { botOwnerId: newOwner.id } })
      emit(realmUserUpdateEvent({ user_id: bot.id, bot_owner_id: newOwner.id }), await usersWhoCanAccess(tx, ctx.realm, bot.id))
    }
    current = await tx.user.findUniqueOrThrow({ where: { id: bot.id } })
    const owner = current.botOwnerId === null ? null : await tx.user.findUnique({ where: { id: current.botOwnerId }, select: { email: true } })
    const streamName = async (id: number | null) => (id === null ? null : ((await tx.stream.findUnique({ where: { id }, select: { name: true } }))?.name ?? null))
    const result: UpdateBotResult = {
      full_name: current.fullName,
      avatar_url: avatarUrl(current),
      service_interface: null,
      service_payload_url: null,
      config_data: null,
      default_sending_stream: await streamName(current.defaultSendingStreamId),
      default_events_register_stream: await streamName(current.defaultEventsRegisterStreamId),
      default_all_public_streams: current.defaultAllPublicStreams,
    }
    if (owner) result.bot_owner = owner.email
    return result
  })
  return updated
}
