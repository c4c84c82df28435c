// Organization keys of POST /register that need the database or stand for
// features Roost does not have (then the truthful empty value), each under the
// fetch type upstream puts it (fetch_initial_state_data).
import type { PrismaClient, Realm, User } from '../db/index.js'
import { isAdmin } from '../domain/roles.js'
import { avatarUrl } from '../present/user.js'
import { getRealmPermissionState } from './realm-permissions.js'
import { serverSupportedPermissionSettings } from '../domain/permission-settings.js'

export interface RegisterRealmContext {
  prisma: PrismaClient
  realm: Realm
  user: User | null
}

export async function fetchRealmExtras(ctx: RegisterRealmContext, want: (type: string) => boolean): Promise<Record<string, unknown>> {
  const { prisma, realm, user } = ctx
  const out: Record<string, unknown> = {}
  if (want('realm')) {
    // Every group permission setting as a group-setting value, the spec's deprecated
    // policies derived from them, and upstream's configuration of each setting.
    const permissions = await getRealmPermissionState(prisma, realm)
    for (const [name, value] of Object.entries(permissions.values)) out[`realm_${name}`] = value
    for (const [name, value] of Object.entries(permissions.policies)) out[`realm_${name}`] = value
    out.server_supported_permission_settings = serverSupportedPermissionSettings()
    // No AI summaries on this server (level 350).
    out.server_can_summarize_topics = false
  }
  if (want('realm_domains')) {
    const domains = await prisma.realmDomain.findMany({ where: { realmId: realm.id }, orderBy: { domain: 'asc' } })
    out.realm_domains = domains.map((d) => ({ domain: d.domain, allow_subdomains: d.allowSubdomains }))
  }
  if (want('realm_bot')) out.realm_bots = user ? await administeredBots(prisma, realm, user) : []
  // Roost runs no embedded bots, ships no incoming-webhook integrations, code playgrounds,
  // default channel groups, Zoom integration or search stop words.
  if (want('realm_embedded_bots')) out.realm_embedded_bots = []
  if (want('realm_incoming_webhook_bots')) out.realm_incoming_webhook_bots = []
  if (want('realm_playgrounds')) out.realm_playgrounds = []
  // Level 363: the organization's billing state; with no billing there is never a sponsorship request.
  if (want('realm_billing')) out.realm_billing = { has_pending_sponsorship_request: false }
  if (want('default_stream_groups')) out.realm_default_stream_groups = []
  if (want('has_zoom_token')) out.has_zoom_token = false
  if (want('stop_words')) out.stop_words = []
  return out
}

/** The bots `user` can administer (all of the organization's for an administrator), as upstream's get_owned_bot_dicts. */
async function administeredBots(prisma: PrismaClient, realm: Realm, user: User): Promise<Record<string, unknown>[]> {
  const bots = await prisma.user.findMany({
    where: { realmId: realm.id, isBot: true, isSystemBot: false, ...(isAdmin(user.role) ? {} : { botOwnerId: user.id }) },
    include: { defaultSendingStream: { select: { name: true } }, defaultEventsRegisterStream: { select: { name: true } } },
    orderBy: { id: 'asc' },
  })
  return bots.map((bot) => ({
    email: bot.email,
    user_id: bot.id,
    full_name: bot.fullName,
    bot_type: bot.botType,
    is_active: bot.isActive,
    api_key: bot.apiKey,
    default_sending_stream: bot.defaultSendingStream?.name ?? null,
    default_events_register_stream: bot.defaultEventsRegisterStream?.name ?? null,
    default_all_public_streams: bot.defaultAllPublicStreams,
    owner_id: bot.botOwnerId,
    avatar_url: avatarUrl(bot),
    services: [],
  }))
}
