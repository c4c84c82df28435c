// A new organization on this server (the admin CLI's `org create`): a checked
// subdomain (domain/subdomain.ts; '' is the root organization at
// EXTERNAL_URL), the realm's rows, and either its owner with a password or a
// pending invitation for the owner (accepted on the /join/{key} page). One
// transaction: a refused or concurrent creation leaves nothing behind.
// A new realm has no event queues yet, so nothing is published.
import { randomBytes } from 'node:crypto'
import type { Realm, User } from '../db/index.js'
import type { Services } from './context.js'
import { createRealmRows } from './create-realm.js'
import { checkFullName } from '../domain/user-rules.js'
import { PASSWORD_MIN_LENGTH } from '../domain/credentials.js'
import { generateInviteKey } from './invites.js'
import { insertUser } from './user-rows.js'
import { isValidEmail } from '../access/user.js'
import { isUniqueViolation } from '../db/errors.js'
import { checkSubdomain } from '../domain/subdomain.js'
import { ROLE } from '../domain/roles.js'
import { badNameOrUsername, passwordTooWeak, realmNameInvalid, subdomainUnavailable } from '../errors.js'
import { fakeEmailDomain, realmUrl } from '../present/realm.js'
import { INVITE_STATUS, inviteLinkUrl } from '../queries/invites.js'

/** Upstream's Realm.MAX_REALM_NAME_LENGTH. */
export const MAX_REALM_NAME_LENGTH = 40

export interface CreateOrganizationInput {
  name: string
  /** '' for the root organization (EXTERNAL_URL's own host). */
  subdomain: string
  ownerEmail: string
  ownerFullName?: string
  /** Owner's password; a random one is made when absent (unless `inviteOwner`). */
  ownerPassword?: string
  /** Create no owner account: a pending owner invitation instead. */
  inviteOwner?: boolean
}

export type CreatedOrganization =
  | { realm: Realm; url: string; kind: 'owner'; owner: User; password: string }
  | { realm: Realm; url: string; kind: 'invitation'; invitationUrl: string; expiresAt: Date }

/** The address's local part when it makes a valid name ('Owner' otherwise). */
function defaultOwnerName(email: string): string {
  try {
    return checkFullName(email.split('@')[0] ?? '')
  } catch {
    return 'Owner'
  }
}

export async function createOrganization(services: Services, input: CreateOrganizationInput): Promise<CreatedOrganization> {
  const subdomain = input.subdomain
  if (subdomain !== '') checkSubdomain(subdomain)
  const name = input.name.trim()
  if (name.length === 0 || name.length > MAX_REALM_NAME_LENGTH) throw realmNameInvalid()
  const email = input.ownerEmail.trim()
  if (!isValidEmail(email)) throw badNameOrUsername()
  const fullName = input.ownerFullName !== undefined ? checkFullName(input.ownerFullName) : defaultOwnerName(email)
  if (input.ownerPassword !== undefined && input.ownerPassword.length < PASSWORD_MIN_LENGTH) throw passwordTooWeak()
  if (await services.prisma.realm.findUnique({ where: { stringId: subdomain }, select: { id: true } })) throw subdomainUnavailable()

  const now = services.now()
  try {
    return await services.prisma.$transaction(
      async (tx): Promise<CreatedOrganization> => {
        const { realm, notificationBot } = await createRealmRows(tx, services, { stringId: subdomain, name })
        const url = realmUrl(realm, services.config.externalUrl)
        if (input.inviteOwner) {
          const expiresAt = new Date(now.getTime() + services.config.invitationLinkValidityMinutes * 60_000)
          const key = generateInviteKey()
          await tx.invitation.create({
            data: {
              realmId: realm.id,
              email,
              invitedById: notificationBot.id,
              inviteAs: ROLE.OWNER,
              includeRealmDefaultSubscriptions: true,
              notifyReferrerOnJoin: false,
              key,
              status: INVITE_STATUS.PENDING,
              createdAt: now,
              expiresAt,
            },
          })
          return { realm, url, kind: 'invitation', invitationUrl: inviteLinkUrl(realm, services.config.externalUrl, key), expiresAt }
        }
        const password = input.ownerPassword ?? randomBytes(12).toString('base64url')
        const { user } = await insertUser(tx, realm, { email, fullName, password, role: ROLE.OWNER, dateJoined: now, emailDomain: fakeEmailDomain(realm, services.config.externalUrl) })
        return { realm, url, kind: 'owner', owner: user, password }
      },
      { timeout: 60_000, maxWait: 30_000 },
    )
  } catch (error) {
    // Another process created the same subdomain between the check and the insert.
    if (isUniqueViolation(error)) throw subdomainUnavailable()
    throw error
  }
}
