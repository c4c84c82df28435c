// Server-rendered pages outside /api/v1 (links people open from mails).
import type { FastifyInstance } from 'fastify'
import type { Services } from '../../services.js'
import { registerJoinPages } from './join.js'
import { registerLoginPages } from './login.js'

export function registerPages(app: FastifyInstance, services: Services): void {
  registerJoinPages(app, services)
  registerLoginPages(app, services)
}
