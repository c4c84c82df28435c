// The only place error bodies are built: every failure under /api/v1 gets the
// error envelope with the right status, including the ones Fastify and Node's
// HTTP server answer themselves (bad URLs, over-long path segments, header
// overflow, unparsable bodies).
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, badRequest, notFound, requestBodyTooLarge, serverNotReady, tooManyFilesUploaded } from '../errors.js'
import { isBackendUnavailable } from '../unavailable.js'

/** Set once the request was read (body parsed, multipart consumed): errors before it are the client's. */
const REQUEST_READ = Symbol('roost.requestRead')

/** Marks the request read; the API routes call it first thing in their handler (app.ts), a hook per request costing more. */
export function markRequestRead(request: FastifyRequest): void {
  ;(request as unknown as Record<symbol, boolean>)[REQUEST_READ] = true
}

/** Marks every request of `scope` read when its handler is reached: for the routes that do not call markRequestRead. */
export function markRequestsRead(scope: FastifyInstance): void {
  scope.addHook('preHandler', (request, _reply, done) => {
    markRequestRead(request)
    done()
  })
}

function envelope(error: ApiError): Record<string, unknown> {
  return { result: 'error', msg: error.msg, code: error.code, ...error.extra }
}

/**
 * A Basic challenge is for API clients: outside /api (the app's /json, file
 * routes a browser fetches) it is upstream's `Session realm=…` instead, since a
 * browser that meets `WWW-Authenticate: Basic` on a fetch asks its user for a
 * password (a headless one holds the request unanswered) rather than handing
 * the 401 to the page.
 */
export const SESSION_CHALLENGE = 'Session realm="roost"'

function send(reply: FastifyReply, error: ApiError): FastifyReply {
  const browser = !reply.request.url.startsWith('/api/')
  for (const [name, value] of Object.entries(error.headers)) {
    reply.header(name, browser && name.toLowerCase() === 'www-authenticate' && value.startsWith('Basic ') ? SESSION_CHALLENGE : value)
  }
  return reply.code(error.status).send(envelope(error))
}

function isMultipart(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().includes('multipart/')
}

const malformedBody = (request: FastifyRequest) =>
  badRequest(isMultipart(request) ? 'Malformed multipart/form-data body' : 'Malformed request body')

function fromFastify(error: FastifyError, request: FastifyRequest): ApiError | undefined {
  const status = error.statusCode ?? 500
  if (status >= 500) return undefined
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('Unsupported content type', 'BAD_REQUEST', 415)
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return requestBodyTooLarge()
    case 'FST_FILES_LIMIT':
      return tooManyFilesUploaded()
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('Malformed JSON', 'INVALID_JSON', 400)
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
    case 'FST_INVALID_JSON_FIELD_ERROR':
    case 'FST_PROTO_VIOLATION':
    case 'FST_MP_PREMATURE_CLOSE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return malformedBody(request)
    default:
      return new ApiError(error.message || 'Bad request', 'BAD_REQUEST', status)
  }
}

/** Errors Fastify's router meets before any route runs (Fastify's `frameworkErrors` option). */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      send(reply, badRequest('Invalid URL: bad percent-encoding'))
      return
    case 'FST_ERR_MAX_PARAM_LENGTH':
      send(reply, new ApiError('URL path segment too long', 'BAD_REQUEST', 414))
      return
    default:
      send(reply, new ApiError('Internal server error', 'INTERNAL_SERVER_ERROR', 500))
  }
}

/**
 * Errors Node's HTTP parser meets before there is a request (Fastify's
 * `clientErrorHandler` option): header overflow (431), timeouts (408),
 * unparsable requests (400), answered in the envelope on the raw socket.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  let status = 400
  let reason = 'Bad Request'
  let body = envelope(badRequest('Malformed HTTP request'))
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431
    reason = 'Request Header Fields Too Large'
    body = envelope(new ApiError('Request header fields too large', 'BAD_REQUEST', 431))
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408
    reason = 'Request Timeout'
    body = envelope(new ApiError('Request timeout', 'BAD_REQUEST', 408))
  }
  const text = JSON.stringify(body)
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    )
  }
  socket.destroy(error)
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) return send(reply, error)
    const known = typeof error === 'object' && error !== null && 'statusCode' in error ? fromFastify(error as FastifyError, request) : undefined
    if (known) return send(reply, known)
    if (isBackendUnavailable(error)) {
      request.log.warn({ err: error, url: request.url, method: request.method }, 'backend unavailable')
      return send(reply, serverNotReady())
    }
    if (!(request as unknown as Record<symbol, boolean>)[REQUEST_READ]) {
      // Thrown while the body was read (busboy's "Malformed part header", "Unexpected end of form"…): the client's fault.
      request.log.info({ err: error, url: request.url, method: request.method }, 'unreadable request')
      return send(reply, malformedBody(request))
    }
    request.log.error({ err: error, url: request.url, method: request.method }, 'unhandled error')
    return send(reply, new ApiError('Internal server error', 'INTERNAL_SERVER_ERROR', 500))
  })
  app.setNotFoundHandler((_request, reply) => send(reply, notFound()))
}

export { badRequest }
