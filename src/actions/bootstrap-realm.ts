// Startup bootstrap (DESIGN.md): when the database has no realm, create one
// from BOOTSTRAP_*; in embedded mode with nothing given, a demo realm whose
// owner's credentials are printed once.
import { randomBytes } from 'node:crypto'
import type { Services } from './context.js'
import { createRealm } from './create-realm.js'
import { realmUrl } from '../present/realm.js'
import { isUniqueViolation } from '../db/errors.js'

export interface BootstrapResult {
  realmName: string
  url: string
  email: string
  password: string
  apiKey: string
  printPassword: boolean
}

export async function bootstrapRealm(services: Services): Promise<BootstrapResult | undefined> {
  if ((await services.prisma.realm.count()) > 0) return undefined
  const { realmName, ownerEmail, ownerPassword } = services.config.bootstrap
  const embedded = !services.config.databaseUrl
  if (!ownerEmail && !embedded) return undefined
  const demo = !ownerEmail
  const email = ownerEmail ?? 'owner@example.com'
  const password = ownerPassword ?? randomBytes(12).toString('base64url')
  const name = realmName ?? (demo ? 'Roost demo' : 'Roost')
  let created
  try {
    created = await createRealm(services, {
      stringId: '',
      name,
      owner: { email, fullName: demo ? 'Demo Owner' : email.split('@')[0] ?? 'Owner', password },
    })
  } catch (error) {
    // Another node of the cluster bootstrapped first.
    if (isUniqueViolation(error)) return undefined
    throw error
  }
  const { realm, owner } = created
  return { realmName: name, url: realmUrl(realm, services.config.externalUrl), email, password, apiKey: owner.apiKey, printPassword: demo }
}
