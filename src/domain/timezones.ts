// IANA time zone names accepted for the `timezone` setting: the canonical
// names the runtime lists, UTC, and the aliases ICU resolves (US/Eastern,
// Asia/Calcutta, Etc/GMT+5 …). Offsets such as "+01:00" are not names.

const canonical: ReadonlySet<string> = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])
const NAME = /^[A-Za-z][A-Za-z0-9_+\-]*(?:\/[A-Za-z0-9_+\-]+)*$/

export function isValidTimezone(name: string): boolean {
  if (canonical.has(name)) return true
  if (!NAME.test(name)) return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name })
    return true
  } catch {
    return false
  }
}
