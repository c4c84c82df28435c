// OUTBOUND_ALLOW: destinations an operator lets outbound requests reach although
// the address policy would refuse them (an internal gateway, a push bouncer on
// the private network). Entries, comma-separated:
//   host          a DNS name or IP address, any port    push-gw.internal, 10.0.0.7, [fd00::7]
//   host:port     that name or address on that port      push-gw.internal:8443, [fd00::7]:8443
//   address/bits  any address in the CIDR range, any port  10.20.0.0/16, fd00::/8
// A name entry matches the URL's host name exactly (case-insensitive), so
// every address it resolves to is allowed; an address or range entry matches
// the resolved address.
import ipaddr from 'ipaddr.js'

export type AllowEntry =
  | { kind: 'name'; name: string; port?: number }
  | { kind: 'address'; address: string; port?: number }
  | { kind: 'range'; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; text: string }

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/

/** The canonical text of an IP address (IPv4-mapped IPv6 as its IPv4 address), for comparisons. */
export function canonicalAddress(address: string): string {
  return ipaddr.process(address).toNormalizedString()
}

function port(text: string | undefined, entry: string): number | undefined {
  if (text === undefined) return undefined
  const value = /^\d{1,5}$/.test(text) ? Number(text) : 0
  if (value < 1 || value > 65535) throw new Error(`'${entry}' has no valid port`)
  return value
}

/** One entry of OUTBOUND_ALLOW; throws an Error saying what is wrong. */
export function parseAllowEntry(raw: string): AllowEntry {
  const entry = raw.trim().toLowerCase()
  if (entry.includes('/')) {
    if (!ipaddr.isValidCIDR(entry)) throw new Error(`'${raw}' is not a CIDR range`)
    return { kind: 'range', range: ipaddr.parseCIDR(entry), text: entry }
  }
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(entry)
  if (bracketed) {
    if (!ipaddr.IPv6.isValid(bracketed[1]!)) throw new Error(`'${raw}' is not an IPv6 address`)
    return { kind: 'address', address: canonicalAddress(bracketed[1]!), port: port(bracketed[2], raw) }
  }
  if (ipaddr.IPv6.isValid(entry)) return { kind: 'address', address: canonicalAddress(entry) }
  const [host = '', portText, ...rest] = entry.split(':')
  if (rest.length > 0) throw new Error(`'${raw}' is not host[:port]`)
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return { kind: 'address', address: canonicalAddress(host), port: port(portText, raw) }
  if (!HOST_NAME.test(host) || /^[\d.]+$/.test(host)) throw new Error(`'${raw}' is not a host name, IP address or CIDR range`)
  return { kind: 'name', name: host.replace(/\.$/, ''), port: port(portText, raw) }
}

/** Whether an entry lets a request to `name`:`port`, resolved to `address`, through. */
export function allows(entries: readonly AllowEntry[], name: string, port: number, address: string): boolean {
  const canonical = canonicalAddress(address)
  const parsed = ipaddr.process(address)
  const host = name.toLowerCase().replace(/\.$/, '')
  return entries.some((entry) => {
    if (entry.kind === 'range') return parsed.kind() === entry.range[0].kind() && parsed.match(entry.range)
    if (entry.port !== undefined && entry.port !== port) return false
    return entry.kind === 'name' ? entry.name === host : entry.address === canonical
  })
}
