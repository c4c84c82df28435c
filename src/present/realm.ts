import type { Realm } from '../db/index.js'

/** The realm's canonical URL: EXTERNAL_URL, with the subdomain prefixed for non-root realms. */
export function realmUrl(realm: Pick<Realm, 'stringId'>, externalUrl: string): string {
  if (realm.stringId === '') return externalUrl
  const url = new URL(externalUrl)
  url.hostname = `${realm.stringId}.${url.hostname}`
  return url.toString().replace(/\/+$/, '')
}

export function realmIconUrl(realm: Pick<Realm, 'stringId' | 'iconUrl'>, externalUrl: string): string {
  return realm.iconUrl ?? `${realmUrl(realm, externalUrl)}/static/images/logo/roost-icon.png`
}

/**
 * The domain of addresses that only identify an account to the API (the
 * notification bot's, the "Unknown user" placeholders'): the realm's host,
 * or `<host>.invalid` when the host is not a domain (e.g. localhost).
 */
export function fakeEmailDomain(realm: Pick<Realm, 'stringId'>, externalUrl: string): string {
  const host = new URL(externalUrl).hostname
  return `${realm.stringId ? `${realm.stringId}.` : ''}${host.includes('.') ? host : `${host}.invalid`}`
}
