// Notification sounds: which new message plays the user's sound, by
// upstream's rules, and what each named sound is. Roost ships no audio files:
// each name is a few notes the app synthesizes (lib/sounds.ts plays them).
import type { MessageEvent } from './events.js'
import { isUserMuted } from './muted-users.js'
import { effectiveNotification } from './notifications.js'
import { topicKey, type State } from './state.js'
import { VISIBILITY_FOLLOWED, VISIBILITY_MUTED, VISIBILITY_UNMUTED } from './unread.js'

/** The user's `notification_sound` when the setting is missing (upstream's default). */
export const DEFAULT_SOUND = 'zulip'

/** One note: a waveform at a pitch, starting `at` seconds into the sound, rising for `attack` and fading away over `decay` seconds. */
export interface Note { wave: 'sine' | 'triangle' | 'square'; frequency: number; at: number; attack: number; decay: number; gain: number }

/** The notes of each sound in register's `available_notification_sounds` but `none`. */
export const SOUND_NOTES: Readonly<Record<string, readonly Note[]>> = {
  // Two short rising sine notes.
  zulip: [
    { wave: 'sine', frequency: 784, at: 0, attack: 0.01, decay: 0.18, gain: 0.3 },
    { wave: 'sine', frequency: 1175, at: 0.1, attack: 0.01, decay: 0.3, gain: 0.3 },
  ],
  // One bright note ringing out.
  ding: [
    { wave: 'triangle', frequency: 1568, at: 0, attack: 0.005, decay: 0.8, gain: 0.35 },
    { wave: 'sine', frequency: 3136, at: 0, attack: 0.005, decay: 0.25, gain: 0.08 },
  ],
  // Two struck bells, falling, each with an inharmonic overtone.
  'chime-bell': [
    { wave: 'sine', frequency: 1319, at: 0, attack: 0.004, decay: 1.0, gain: 0.25 },
    { wave: 'sine', frequency: 3640, at: 0, attack: 0.004, decay: 0.35, gain: 0.06 },
    { wave: 'sine', frequency: 988, at: 0.22, attack: 0.004, decay: 1.3, gain: 0.25 },
    { wave: 'sine', frequency: 2727, at: 0.22, attack: 0.004, decay: 0.45, gain: 0.06 },
  ],
}

/** The user's chosen sound's name, or undefined for `none` (or a name the app cannot play). */
export function chosenSound(state: State): string | undefined {
  const name = state.settings.notification_sound
  const sound = typeof name === 'string' ? name : DEFAULT_SOUND
  return sound in SOUND_NOTES ? sound : undefined
}

const WILDCARD_FLAGS = ['stream_wildcard_mentioned', 'topic_wildcard_mentioned', 'wildcard_mentioned']

/**
 * The sound a new message plays, or undefined, as upstream's web app decides:
 * never for one's own messages, a muted sender's, or a message already read (the app also
 * drops one read as soon as it shows, lib/notify.ts); a direct mention or a followed
 * topic overrides muting, a muted topic or channel (unless the topic is
 * unmuted) is silent but for an @all mention in a channel notifying of them.
 * Then a channel whose sound is on (the subscription's
 * `audible_notifications`, else `enable_stream_audible_notifications`), a
 * followed topic with `enable_followed_topic_audible_notifications`, and,
 * with `enable_sounds`, direct messages, mentions and alert words.
 */
export function soundFor(state: State, event: Pick<MessageEvent, 'message' | 'flags'>): string | undefined {
  const { message, flags } = event
  if (message.sender_id === state.selfId || isUserMuted(state, message.sender_id) || flags.includes('read')) return undefined
  const sound = chosenSound(state)
  if (sound === undefined) return undefined
  const direct = flags.includes('mentioned') || flags.includes('group_mentioned')
  const wildcard = flags.some((f) => WILDCARD_FLAGS.includes(f))
  const sub = message.type === 'stream' && message.stream_id !== undefined ? state.subscriptions.get(message.stream_id) : undefined
  const policy = sub ? state.userTopics.get(topicKey(sub.stream_id, message.subject)) : undefined
  const followed = policy === VISIBILITY_FOLLOWED
  if (sub && !direct && !followed) {
    if (policy === VISIBILITY_MUTED) return undefined
    if (sub.is_muted && policy !== VISIBILITY_UNMUTED && !(wildcard && sub.wildcard_mentions_notify === true)) return undefined
  }
  const settings = state.settings
  if (sub && effectiveNotification(state, sub, 'audible_notifications')) return sound
  if (followed && settings.enable_followed_topic_audible_notifications === true) return sound
  if (settings.enable_sounds === false) return undefined
  if (message.type === 'private' || direct || flags.includes('has_alert_word')) return sound
  if (sub && wildcard && effectiveNotification(state, sub, 'wildcard_mentions_notify')) return sound
  if (followed && wildcard && settings.enable_followed_topic_wildcard_mentions_notify === true) return sound
  return undefined
}
