// Which IP addresses an outbound request may reach without an allow-list
// entry: public unicast only. Classification is ipaddr.js's special ranges;
// IPv6 must also lie in global unicast (2000::/3), so the IPv4-compatible
// form (::a.b.c.d) and other unassigned space are refused. Addresses that
// embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, RFC 6145 translated
// ::ffff:0:a.b.c.d, the NAT64 well-known prefix 64:ff9b::/96) are judged by
// the IPv4 address they carry.
import ipaddr from 'ipaddr.js'

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3')
const EMBEDDING_IPV4 = new Set(['ipv4Mapped', 'rfc6145'])
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96')

/** The IPv4 address an IPv6 address carries in its last 32 bits, for the forms that route to it. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (!EMBEDDING_IPV4.has(address.range()) && !address.match(NAT64_WELL_KNOWN)) return undefined
  const bytes = address.toByteArray()
  return ipaddr.fromByteArray(bytes.slice(12)) as ipaddr.IPv4
}

/** The range name of a refused address ('loopback', 'private', 'linkLocal', …), or undefined for a public unicast address. */
export function refusedRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'invalid'
  const parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv4') {
    const range = parsed.range()
    return range === 'unicast' ? undefined : range
  }
  const v6 = parsed as ipaddr.IPv6
  const v4 = embeddedIpv4(v6)
  if (v4) {
    const range = v4.range()
    return range === 'unicast' ? undefined : `${v6.range()} ${range}`
  }
  const range = v6.range()
  if (range !== 'unicast') return range
  return v6.match(GLOBAL_UNICAST) ? undefined : 'not global unicast'
}

/** Whether an address is one an outbound request may reach without an allow-list entry. */
export function isPublicAddress(address: string): boolean {
  return refusedRange(address) === undefined
}
