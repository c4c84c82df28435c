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
