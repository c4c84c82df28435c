import { pushConfigured } from '../../notifications/push-senders.js'
import type { Realm } from '../../db/index.js'
import { route } from '../route.js'
import { subdomainOf } from '../auth.js'
import { versionFields } from '../../domain/upstream-names.js'
import { badRequest } from '../../errors.js'
import { realmIconUrl, realmUrl } from '../../present/realm.js'

const AUTH_METHODS = ['password', 'dev', 'email', 'ldap', 'remoteuser', 'github', 'azuread', 'gitlab', 'google', 'apple', 'saml', 'openid connect']

function realmFields(realm: Realm, externalUrl: string) {
  const url = realmUrl(realm, externalUrl)
  return {
    email_auth_enabled: realm.passwordAuthEnabled,
    require_email_format_usernames: true,
    realm_uri: url,
    realm_url: url,
    realm_name: realm.name,
    realm_icon: realmIconUrl(realm, externalUrl),
    realm_description: realm.renderedDescription,
    realm_web_public_access_enabled: realm.webPublicAccessEnabled,
    external_authentication_methods: [],
  }
}

export const routes = [
  route({
    method: 'GET',
    url: '/server_settings',
    auth: 'public',
    handler: async (_input, ctx) => {
      if (!ctx.realm && subdomainOf(ctx.request.headers.host, ctx.config.externalUrl) !== '') throw badRequest('Invalid subdomain')
      const passwordEnabled = ctx.realm?.passwordAuthEnabled ?? true
      return {
        authentication_methods: Object.fromEntries(AUTH_METHODS.map((m) => [m, m === 'password' || m === 'email' ? passwordEnabled : false])),
        ...versionFields(ctx.config.upstreamNames),
        push_notifications_enabled: pushConfigured(ctx.config),
        // Roost's own key: the VAPID public key browsers subscribe to Web Push with (null without a Web Push sender).
        webpush_vapid_public_key: ctx.config.webPush?.publicKey ?? null,
        is_incompatible: false,
        ...(ctx.realm ? realmFields(ctx.realm, ctx.config.externalUrl) : {}),
      }
    },
  }),
]
