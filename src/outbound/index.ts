// Outbound HTTP requests: the guarded client every sender uses, and the
// policy it applies (docs/outbound-requests.md).
export { outboundClientFor, OutboundClient, OutboundFailed, OUTBOUND_CONNECT_TIMEOUT_MS, OUTBOUND_MAX_RESPONSE_BYTES, OUTBOUND_TIMEOUT_MS, type OutboundOptions, type OutboundRequest, type OutboundResponse } from './client.js'
export { OutboundRefused, OutboundUnresolved, type Destination } from './destination.js'
export { parseAllowEntry, type AllowEntry } from './allow-list.js'
export { isPublicAddress, refusedRange } from './address-policy.js'
