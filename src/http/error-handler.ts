// The only place error bodies are built: every failure under /api/v1 gets the
// error envelope with the right status.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, badRequest, notFound, tooManyFilesUploaded } from '../errors.js'

function send(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value)
  return reply.code(error.status).send({ result: 'error', msg: error.msg, code: error.code, ...error.extra })
}

function fromFastify(error: FastifyError): ApiError | undefined {
  const status = error.statusCode ?? 500
  if (status >= 500) return undefined
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('Unsupported content type', 'BAD_REQUEST', 415)
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new ApiError('Request body is too large', 'BAD_REQUEST', 413)
    case 'FST_FILES_LIMIT':
      return tooManyFilesUploaded()
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('Malformed JSON', 'INVALID_JSON', 400)
    default:
      return new ApiError(error.message || 'Bad request', 'BAD_REQUEST', status)
  }
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) return send(reply, error)
    const known = typeof error === 'object' && error !== null && 'statusCode' in error ? fromFastify(error as FastifyError) : undefined
    if (known) return send(reply, known)
    request.log.error({ err: error, url: request.url, method: request.method }, 'unhandled error')
    return send(reply, new ApiError('Internal server error', 'INTERNAL_SERVER_ERROR', 500))
  })
  app.setNotFoundHandler((_request, reply) => send(reply, notFound()))
}

export { badRequest }
