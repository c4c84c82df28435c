// GET or POST /accounts/unsubscribe/missed_messages/{token} (upstream's
// unsubscribe link in missed-message emails): no login; a valid token turns
// enable_offline_email_notifications off for its user, through the ordinary
// settings action, so the user's clients get the user_settings event.
import type { Services } from './context.js'
import type { Realm } from '../db/index.js'
import { ApiError } from '../errors.js'
import { tokenMatches, tokenUserId } from '../notifications/unsubscribe.js'
import { updateSettings } from './update-settings.js'

export async function unsubscribeMissedMessages(services: Services, token: string, log: Parameters<typeof updateSettings>[0]['log']): Promise<{ realm: Realm }> {
  const userId = tokenUserId(token)
  const user = userId === null ? null : await services.prisma.user.findUnique({ where: { id: userId }, include: { realm: true } })
  if (!user || !tokenMatches(token, user) || !user.isActive || user.realm.deactivated) {
    throw new ApiError('Invalid unsubscribe link', 'BAD_REQUEST', 404)
  }
  const { realm, ...plain } = user
  await updateSettings({ ...services, realm, user: plain, log, clientName: 'unsubscribe link' }, { settings: { enable_offline_email_notifications: false } })
  return { realm }
}
