// Settings calls: own profile and status, display and notification
// settings, alert words, channel and topic settings, and the admin calls.
import { call } from './client.js'

export const updateSettings = (params: Record<string, string | number | boolean>) => call('PATCH', '/settings', params)
export const setStatus = (statusText: string, away: boolean) => call('POST', '/users/me/status', { status_text: statusText, away })
export const setAlertWords = (words: string[]) => call('POST', '/users/me/alert_words', { alert_words: words })
export const removeAlertWords = (words: string[]) => call('DELETE', '/users/me/alert_words', { alert_words: words })
export const setSubscriptionProperty = (streamId: number, property: string, value: boolean | string) =>
  call('POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: streamId, property, value }] })
export const setTopicVisibility = (streamId: number, topic: string, policy: number) => call('POST', '/user_topics', { stream_id: streamId, topic, visibility_policy: policy })
export const createChannel = (name: string, description: string) => call('POST', '/users/me/subscriptions', { subscriptions: [{ name, description }] })
export const archiveChannel = (streamId: number) => call('DELETE', `/streams/${streamId}`)
/** An invitation's role, expiry (null: never) and channels, as upstream's invitation dialog chooses them. */
export interface InviteOptions { inviteAs: number; expiresInMinutes: number | null; streamIds: number[]; includeDefaults: boolean }
const inviteParams = (o: InviteOptions) => ({ invite_as: o.inviteAs, invite_expires_in_minutes: JSON.stringify(o.expiresInMinutes), stream_ids: o.streamIds, include_realm_default_subscriptions: o.includeDefaults })
export const invite = (emails: string, o: InviteOptions) => call('POST', '/invites', { invitee_emails: emails, ...inviteParams(o) })
/** A reusable invitation link (POST /invites/multiuse). */
export const createInviteLink = (o: InviteOptions) => call<{ invite_link: string }>('POST', '/invites/multiuse', inviteParams(o)).then((r) => r.invite_link)
export const setRole = (userId: number, role: number) => call('PATCH', `/users/${userId}`, { role })
export const deactivateUser = (userId: number) => call('DELETE', `/users/${userId}`)
export const reactivateUser = (userId: number) => call('POST', `/users/${userId}/reactivate`)

/** A new avatar from an image file (the server crops and scales it); a realm_user event brings its URL. */
export function uploadAvatar(file: File) {
  const form = new FormData()
  form.append('file', file, file.name)
  return call<{ avatar_url: string }>('POST', '/users/me/avatar', {}, { body: form })
}
export const resetAvatar = () => call('DELETE', '/users/me/avatar')
/** Mutes or unmutes a user; a muted_users event brings the new list (and, for a mute, the read flags of their messages). */
export const muteUser = (userId: number, muted: boolean) => call(muted ? 'POST' : 'DELETE', `/users/me/muted_users/${userId}`)
