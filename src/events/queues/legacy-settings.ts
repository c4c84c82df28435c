// Settings events for queues registered without user_settings_object: the
// deprecated forms of a user_settings update.
import type { WireEvent } from '../bus.js'
import { legacyFamilyOf } from '../../domain/settings.js'
import { updateDisplaySettingsEvent, updateGlobalNotificationsEvent, type SettingValue } from '../schemas/personal.js'

/**
 * The deprecated update_display_settings / update_global_notifications event a
 * queue without user_settings_object receives for a modern settings event
 * (none for settings newer than feature level 89).
 */
export function legacySettingsEvents(event: WireEvent, user: { email: string }): WireEvent[] {
  if (event.type !== 'user_settings' || event.op !== 'update' || typeof event.property !== 'string') return []
  const value = event.value as SettingValue
  const family = legacyFamilyOf(event.property)
  if (family === 'display') {
    const languageName = typeof event.language_name === 'string' ? event.language_name : undefined
    return [updateDisplaySettingsEvent(user.email, event.property, value, languageName)]
  }
  if (family === 'notification') return [updateGlobalNotificationsEvent(user.email, event.property, value)]
  return []
}
