// PATCH /settings: validates every requested change first, then applies them
// in one transaction (all or nothing) and tells the user's clients
// (`user_settings` events; the queue layer derives the legacy ones) and, for
// name, time zone and email visibility, everyone who can see the user
// (`realm_user` update).
import type { Prisma, Realm, Tx, User } from '../db/index.js'
import { idsMatchingLower } from '../db/exact-match.js'
import type { ActionContext, Emit, Services, TxContext } from './context.js'
import { inTransaction, publishAll } from './context.js'
import { hashPassword, randomAlphanumeric, verifyPassword } from '../domain/credentials.js'
import { checkFullName } from '../domain/user-rules.js'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../domain/credentials.js'
import { checkNotStandIn, checkPasswordThrottled, isValidEmail } from '../access/user.js'
import { isAdmin } from '../domain/roles.js'
import { languageName } from '../domain/languages.js'
import { isValidTimezone } from '../domain/timezones.js'
import { SETTINGS_BY_NAME, USER_SETTINGS, checkUserSettingValue } from '../domain/settings.js'
import { userSettingsEvent, type SettingValue } from '../events/schemas/personal.js'
import {
  botRequestsNotAccepted,
  emailChangesDisabled,
  emailInUse,
  incompatibleDenseMode,
  invalidEmailAddress,
  invalidSettingValue,
  newPasswordTooLong,
  newPasswordTooWeak,
  wrongPassword,
} from '../errors.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { propertyInheritingFrom } from '../domain/stream-notifications.js'
import { applyPresenceEnabled } from './update-presence.js'
import { sendEmailChangeConfirmation } from '../mail/email-change.js'
import { invalidConfirmationKey } from '../errors.js'
import { fakeEmailDomain } from '../present/realm.js'
import { realmUserUpdateEvent, withInheritingStreams } from '../events/schemas/index.js'
import { revokeWebSessions } from './web-sessions.js'
import { writeDeliveryEmail } from './change-user-email.js'
import { applyEmailVisibilityChange } from './email-visibility.js'

export interface UpdateSettingsInput {
  /** Table settings by wire name (domain/settings.ts). */
  settings: Record<string, SettingValue | undefined>
  fullName?: string
  email?: string
  oldPassword?: string
  /** The requester's address: password checks are throttled per account and per address. */
  clientAddress?: string
  newPassword?: string
  timezone?: string
  /** The browser session making the change: a new password ends the user's other sessions, not this one. */
  sessionId?: number
}

export type UpdateSettingsResult = {
  /** Set when an email change was started (upstream's response key). */
  account_email?: string
}

/** Upstream EMAIL_CHANGE_CONFIRMATION_DAYS. */
const EMAIL_CHANGE_VALID_MS = 24 * 3600 * 1000
const DENSE_FONT_SIZE = 14
const DENSE_LINE_HEIGHT = 122

export async function updateSettings(ctx: ActionContext, input: UpdateSettingsInput): Promise<UpdateSettingsResult> {
  const user = ctx.user
  if (user.isBot) throw botRequestsNotAccepted()

  // 1. Validate everything before changing anything.
  const requested = Object.entries(input.settings).filter((e): e is [string, SettingValue] => e[1] !== undefined)
  for (const [name, value] of requested) checkUserSettingValue(name, value)
  const { dense_mode: dense, web_font_size_px: font, web_line_height_percent: height } = input.settings
  if (dense === true && ((font !== undefined && font !== DENSE_FONT_SIZE) || (height !== undefined && height !== DENSE_LINE_HEIGHT))) {
    throw incompatibleDenseMode()
  }
  if (input.timezone !== undefined && input.timezone !== '' && !isValidTimezone(input.timezone)) throw invalidSettingValue('timezone')
  // Upstream ignores name changes silently where the realm disables them for non-administrators.
  const fullName =
    input.fullName !== undefined && !(ctx.realm.nameChangesDisabled && !isAdmin(user.role)) ? checkFullName(input.fullName) : undefined
  let passwordHash: string | undefined
  if (input.newPassword !== undefined) {
    const verified = await checkPasswordThrottled(ctx, { realmId: ctx.realm.id, email: user.deliveryEmail, clientAddress: input.clientAddress ?? '' }, () =>
      verifyPassword(user.passwordHash, input.oldPassword ?? ''),
    )
    if (!verified) throw wrongPassword()
    if (input.newPassword.length > PASSWORD_MAX_LENGTH) throw newPasswordTooLong()
    if (input.newPassword.length < PASSWORD_MIN_LENGTH) throw newPasswordTooWeak()
    passwordHash = await hashPassword(input.newPassword)
  }
  const newEmail = input.email?.trim()
  const changingEmail = newEmail !== undefined && newEmail !== '' && newEmail.toLowerCase() !== user.deliveryEmail.toLowerCase()
  if (changingEmail) {
    if (ctx.realm.emailChangesDisabled && !isAdmin(user.role)) throw emailChangesDisabled()
    if (!isValidEmail(newEmail)) throw invalidEmailAddress()
    checkNotStandIn(newEmail, fakeEmailDomain(ctx.realm, ctx.config.externalUrl))
  }

  // 2. Apply in one transaction; events go out after the commit.
  const now = ctx.now()
  const outcome = await inTransaction(ctx, async (tx, emit) => {
    if (changingEmail) {
      const taken = (await idsMatchingLower(tx, 'user_delivery_email', { realm_id: ctx.realm.id }, [newEmail])).length > 0
      if (taken) throw emailInUse(newEmail)
    }
    const current = await tx.userSettings.upsert({ where: { userId: user.id }, create: { userId: user.id }, update: {} })
    const changed = USER_SETTINGS.filter((spec) => {
      const value = input.settings[spec.name]
      return value !== undefined && current[spec.column] !== value
    })
    if (changed.length > 0) {
      const data: Record<string, SettingValue> = {}
      for (const spec of changed) data[spec.column] = input.settings[spec.name] as SettingValue
      await tx.userSettings.update({ where: { userId: user.id }, data: data as Prisma.UserSettingsUncheckedUpdateInput })
    }
    const timezoneChanged = input.timezone !== undefined && input.timezone !== user.timezone
    const nameChanged = fullName !== undefined && fullName !== user.fullName
    if (timezoneChanged || nameChanged || passwordHash !== undefined) {
      await tx.user.update({
        where: { id: user.id },
        data: { ...(timezoneChanged ? { timezone: input.timezone } : {}), ...(nameChanged ? { fullName } : {}), ...(passwordHash ? { passwordHash } : {}) },
      })
    }
    if (passwordHash !== undefined) await revokeWebSessions(tx, [user.id], input.sessionId)
    if (changed.some((s) => s.name === 'enable_drafts_synchronization') && input.settings.enable_drafts_synchronization === false) {
      await tx.draft.deleteMany({ where: { userId: user.id } })
    }
    const request = changingEmail
      ? await tx.emailChangeRequest.create({
          data: {
            userId: user.id,
            oldEmail: user.deliveryEmail,
            newEmail,
            key: randomAlphanumeric(24).toLowerCase(),
            createdAt: now,
            expiresAt: new Date(now.getTime() + EMAIL_CHANGE_VALID_MS),
          },
        })
      : undefined

    for (const spec of changed) {
      const value = input.settings[spec.name] as SettingValue
      const event = userSettingsEvent(spec.name, value, spec.name === 'default_language' ? languageName(String(value)) : undefined)
      emit(withInheritingStreams(event, await inheritingStreams(tx, user.id, spec.name)), [user.id])
    }
    const visibility = input.settings.email_address_visibility
    const apiEmail = changed.some((s) => s.name === 'email_address_visibility')
      ? await applyEmailVisibilityChange(tx, ctx, emit, { user, before: current.emailAddressVisibility, after: Number(visibility) })
      : user.email
    if (timezoneChanged || nameChanged) await emitPersonUpdates(tx, ctx, emit, { nameChanged, timezoneChanged, fullName, timezone: input.timezone, apiEmail })
    return { request, presenceChanged: changed.some((s) => s.name === 'presence_enabled') }
  })

  if (outcome.presenceChanged) await applyPresenceEnabled(ctx, input.settings.presence_enabled === true)
  if (outcome.request) {
    await sendEmailChangeConfirmation(ctx, { request: outcome.request, realm: ctx.realm, fullName: user.fullName })
    return { account_email: 'Check your email for a confirmation link. ' }
  }
  return {}
}

/**
 * For a global default of channel notifications: the user's channels whose
 * subscription inherits it (null), so that queues resolving nulls can follow.
 */
async function inheritingStreams(tx: Tx, userId: number, setting: string): Promise<number[] | undefined> {
  const inherited = propertyInheritingFrom(setting)
  if (inherited === undefined) return undefined
  const rows = await tx.subscription.findMany({
    where: { userId, active: true, stream: { deactivated: false }, [inherited.subscriptionColumn]: null },
    select: { streamId: true },
    orderBy: { streamId: 'asc' },
  })
  return rows.map((r) => r.streamId)
}

async function emitPersonUpdates(
  tx: Tx,
  ctx: TxContext,
  emit: Emit,
  change: { nameChanged: boolean; timezoneChanged: boolean; fullName?: string; timezone?: string; apiEmail: string },
): Promise<void> {
  const audience = await usersWhoCanAccess(tx, ctx.realm, ctx.user.id)
  if (change.timezoneChanged) {
    emit(userSettingsEvent('timezone', change.timezone ?? ''), [ctx.user.id])
    emit(realmUserUpdateEvent({ email: change.apiEmail, user_id: ctx.user.id, timezone: change.timezone ?? '' }), audience)
  }
  if (change.nameChanged) {
    emit(realmUserUpdateEvent({ user_id: ctx.user.id, full_name: change.fullName ?? ctx.user.fullName }), audience)
  }
}

/** The shape of the keys updateSettings issues (24 lowercase letters and digits); anything else is no key at all. */
const EMAIL_CHANGE_KEY = /^[a-z0-9]{24}$/

/**
 * GET /accounts/confirm_new_email/{key}: the link in the confirmation mail.
 * Changes the real address (and the API email when it is the real one) and
 * tells those who can see each of them. A link works only on the host of the
 * organization that issued it (`hostRealmId`), only while the account still
 * has the address it was requested from, and only while it is the user's
 * newest request: any later email change or newer request voids it.
 */
export async function confirmEmailChange(services: Services, key: string, hostRealmId: number | undefined): Promise<{ user: User; realm: Realm; newEmail: string }> {
  const now = services.now()
  if (hostRealmId === undefined || !EMAIL_CHANGE_KEY.test(key)) throw invalidConfirmationKey()
  const request = await services.prisma.emailChangeRequest.findUnique({ where: { key }, include: { user: { include: { realm: true } } } })
  if (
    !request ||
    request.usedAt !== null ||
    request.expiresAt <= now ||
    request.user.realmId !== hostRealmId ||
    request.oldEmail !== request.user.deliveryEmail ||
    !request.user.isActive ||
    request.user.realm.deactivated
  ) {
    throw invalidConfirmationKey()
  }
  const newer = await services.prisma.emailChangeRequest.findFirst({ where: { userId: request.userId, id: { gt: request.id } }, select: { id: true } })
  if (newer) throw invalidConfirmationKey()
  const { user: target, ...req } = request
  const { realm, ...user } = target
  const emitted: Parameters<typeof publishAll>[1] = []
  const updated = await services.prisma.$transaction(async (tx) => {
    const { row, emissions } = await writeDeliveryEmail(tx, realm, user, req.newEmail)
    await tx.emailChangeRequest.update({ where: { id: req.id }, data: { usedAt: now } })
    emitted.push(...emissions)
    return row
  })
  await publishAll({ ...services, realm }, emitted)
  return { user: updated, realm, newEmail: req.newEmail }
}
