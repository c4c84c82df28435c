// Where an outbound request may go. checkDestination parses the URL, refuses
// credentials and non-http(s) schemes, resolves the host name itself and
// refuses the request unless every address the name resolves to is public
// (address-policy.ts) and the port is the scheme's default — or an
// OUTBOUND_ALLOW entry (allow-list.ts) lets that destination through. The
// answer carries the checked address: the connection is made to it, so a
// second resolution (DNS rebinding) cannot send the request elsewhere.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { isPublicAddress, refusedRange } from './address-policy.js'
import { allows, type AllowEntry } from './allow-list.js'

/** A destination the policy refuses; the request is never sent. */
export class OutboundRefused extends Error {
  override name = 'OutboundRefused'
}

/** The host name could not be resolved (a transient failure as far as the caller knows). */
export class OutboundUnresolved extends Error {
  override name = 'OutboundUnresolved'
}

export interface Destination {
  url: URL
  /** The host name without IPv6 brackets (what TLS verifies and SNI names, unless it is an address). */
  name: string
  port: number
  /** The checked address the socket connects to. */
  address: string
  family: 4 | 6
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 }

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutboundUnresolved(`${what}: no answer in ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Resolves and checks a URL against the policy; throws OutboundRefused or OutboundUnresolved. */
export async function checkDestination(raw: string, allowList: readonly AllowEntry[], resolveTimeoutMs: number): Promise<Destination> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new OutboundRefused('not a URL')
  }
  const defaultPort = DEFAULT_PORTS[url.protocol]
  if (defaultPort === undefined) throw new OutboundRefused(`the scheme ${url.protocol} is not http: or https:`)
  if (url.username !== '' || url.password !== '') throw new OutboundRefused('URLs with credentials are refused')
  const name = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const port = url.port === '' ? defaultPort : Number(url.port)
  let addresses: { address: string; family: number }[]
  if (isIP(name) !== 0) addresses = [{ address: name, family: isIP(name) }]
  else {
    try {
      addresses = await withTimeout(lookup(name, { all: true, verbatim: true }), resolveTimeoutMs, `resolving ${name}`)
    } catch (error) {
      if (error instanceof OutboundUnresolved) throw error
      throw new OutboundUnresolved(`${name} does not resolve (${error instanceof Error ? error.message : String(error)})`)
    }
    if (addresses.length === 0) throw new OutboundUnresolved(`${name} does not resolve`)
  }
  for (const { address } of addresses) {
    if (allows(allowList, name, port, address)) continue
    if (!isPublicAddress(address)) throw new OutboundRefused(`${name === address ? address : `${name} (${address})`} is a ${refusedRange(address)} address`)
    if (port !== defaultPort) throw new OutboundRefused(`port ${port} is not the default port of ${url.protocol}`)
  }
  const first = addresses[0]!
  return { url, name, port, address: first.address, family: first.family === 6 ? 6 : 4 }
}
