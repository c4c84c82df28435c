// Request IDs: the caller's `X-Request-Id` when it is a safe token (a proxy or
// another service already named the request), else a random UUID, unique
// across nodes. Fastify binds the ID to every log line of the request
// (`request_id`, app.ts) and the response carries it back in `X-Request-Id`.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

export const REQUEST_ID_HEADER = 'x-request-id'
/** The longest incoming ID kept; a longer one is replaced (a UUID is 36, a W3C trace ID 32). */
export const MAX_REQUEST_ID_LENGTH = 128
/** Letters, digits and `-_.:/+=@`: nothing that could break a log line, a header or a query. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9\-_.:/+=@]+$/

/** The ID of an incoming request (Fastify's `genReqId`). */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER]
  if (typeof given === 'string' && given.length <= MAX_REQUEST_ID_LENGTH && SAFE_REQUEST_ID.test(given)) return given
  return randomUUID()
}

/** Every answer (errors and 404s included) names its request. */
export function returnRequestId(app: FastifyInstance): void {
  // A callback hook (every request): no promise per request.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header(REQUEST_ID_HEADER, request.id)
    done()
  })
}
