// PATCH /settings and its deprecated aliases /settings/display and
// /settings/notifications; plus the page behind the email-change link, which
// lives outside /api/v1 (registerAccountPages, wired in app.ts).
import { Type, type TSchema } from 'typebox'
import type { FastifyInstance } from 'fastify'
import { route } from '../route.js'
import { realmForRequest } from '../auth.js'
import { optional } from '../params.js'
import type { Services } from '../../services.js'
import { confirmEmailChange, updateSettings } from '../../actions/update-settings.js'
import { unsubscribeMissedMessages } from '../../actions/unsubscribe-missed-messages.js'
import { USER_SETTINGS, type SettingSpec } from '../../domain/settings.js'
import type { SettingValue } from '../../events/schemas/personal.js'
import { ApiError } from '../../errors.js'
import { escapeHtml } from '../../domain/html-escape.js'
import { startWebSession } from '../../actions/web-sessions.js'
import { setSessionCookies } from '../session-auth.js'

function schemaOf(spec: SettingSpec): TSchema {
  switch (spec.kind) {
    case 'boolean':
      return Type.Boolean()
    case 'integer':
      return Type.Integer()
    case 'string':
      return Type.String()
  }
}

const settingParams: Record<string, TSchema> = Object.fromEntries(USER_SETTINGS.map((spec) => [spec.name, optional(schemaOf(spec))]))

const params = {
  ...settingParams,
  full_name: optional(Type.String()),
  email: optional(Type.String()),
  old_password: optional(Type.String()),
  new_password: optional(Type.String()),
  timezone: optional(Type.String()),
}

const settingsRoute = (url: string) =>
  route({
    method: 'PATCH',
    url,
    params,
    handler: async (input, ctx) => {
      const values = input as Record<string, SettingValue | undefined>
      const settings = Object.fromEntries(USER_SETTINGS.map((spec) => [spec.name, values[spec.name]]))
      return updateSettings(ctx, {
        settings,
        fullName: input.full_name as string | undefined,
        email: input.email as string | undefined,
        oldPassword: input.old_password as string | undefined,
        clientAddress: ctx.request.ip,
        newPassword: input.new_password as string | undefined,
        timezone: input.timezone as string | undefined,
        sessionId: ctx.request.roostSessionId ?? undefined,
      })
    },
  })

export const routes = [settingsRoute('/settings'), settingsRoute('/settings/display'), settingsRoute('/settings/notifications')]

function page(title: string, body: string): string {
  return `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${body}</p></body></html>\n`
}

/** GET /accounts/confirm_new_email/{key}: HTML, outside the API prefix. Call from buildApp(). */
export function registerAccountPages(app: FastifyInstance, services: Services): void {
  app.get<{ Params: { key: string } }>('/accounts/confirm_new_email/:key', async (request, reply) => {
    reply.type('text/html; charset=utf-8')
    try {
      const hostRealm = await realmForRequest(services, request)
      const { user } = await confirmEmailChange(services, request.params.key, hostRealm?.id)
      // The link came by mail to the new address: the browser that opens it is logged in and sent to the app.
      setSessionCookies(services, reply, await startWebSession(services, user.id))
      return reply.code(303).header('location', '/').header('cache-control', 'no-store').send()
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      reply.code(error.status === 404 ? 404 : 400)
      return page('Could not change your email address', escapeHtml(error.msg))
    }
  })
  // The unsubscribe link of missed-message emails; POST for mail clients' one-click List-Unsubscribe (RFC 8058).
  app.route<{ Params: { token: string } }>({
    method: ['GET', 'POST'],
    url: '/accounts/unsubscribe/missed_messages/:token',
    handler: async (request, reply) => {
      reply.type('text/html; charset=utf-8')
      try {
        const { realm } = await unsubscribeMissedMessages(services, request.params.token, request.log)
        return page('Unsubscribed', `You will no longer get missed-message emails from ${escapeHtml(realm.name)}. You can turn them on again in your notification settings.`)
      } catch (error) {
        if (!(error instanceof ApiError)) throw error
        reply.code(error.status)
        return page('Could not unsubscribe', escapeHtml(error.msg))
      }
    },
  })
}
