// Externally hosted (gravatar-style) avatars: clients that declared
// client_extavatar compute these URLs themselves, so the server sends null.

export const EXTERNAL_AVATAR_URL_PREFIX = 'https://secure.gravatar.com/avatar/'

export function isExternalAvatarUrl(url: unknown): boolean {
  return typeof url === 'string' && url.startsWith(EXTERNAL_AVATAR_URL_PREFIX)
}
