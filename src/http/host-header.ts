// The organization is chosen from the Host header (http/auth.ts), so a
// request must name exactly one: with two, Node keeps the first while a proxy
// in front may have routed or checked by the other.
import type { FastifyInstance } from 'fastify'
import { badRequest } from '../errors.js'

/** How many Host headers the raw request carried (names are case-insensitive). */
export function countHostHeaders(rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    if (name.length === 4 && name.toLowerCase() === 'host') count++
  }
  return count
}

/** Refuses, with 400 in the error envelope, every request carrying more than one Host header. */
export function refuseRepeatedHost(app: FastifyInstance): void {
  // A callback hook, not an async one: every request passes here.
  app.addHook('onRequest', (request, _reply, done) => {
    if (countHostHeaders(request.raw.rawHeaders) > 1) return done(badRequest('More than one Host header'))
    done()
  })
}
