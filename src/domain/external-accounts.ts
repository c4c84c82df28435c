// Upstream's DEFAULT_EXTERNAL_ACCOUNTS: the external-account subtypes of custom
// profile fields (type 7) that need no URL pattern of their own. Register
// sends them as realm_default_external_accounts.
export interface ExternalAccount {
  name: string
  text: string
  hint: string
  url_pattern: string
}

export const DEFAULT_EXTERNAL_ACCOUNTS: Readonly<Record<string, ExternalAccount>> = {
  github: { name: 'GitHub', text: 'GitHub', hint: 'Enter your GitHub username', url_pattern: 'https://github.com/%(username)s' },
  twitter: { name: 'X (Twitter)', text: 'X (Twitter)', hint: 'Enter your X (Twitter) username', url_pattern: 'https://x.com/%(username)s' },
}
