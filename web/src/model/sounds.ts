// Notification sounds: which new message plays the user's sound, by
// upstream's rules, and what each named sound is. Roost ships no audio files:
// each name is a few notes the app synthesizes (lib/sounds.ts plays them).
import type { MessageEvent } from './events.js'
import { alerts } from './notifications.js'
import type { State } from './state.js'

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

/** The sound a new message plays, or undefined: the user's chosen sound when the message alerts by sound (`alerts` in notifications.ts). */
export function soundFor(state: State, event: Pick<MessageEvent, 'message' | 'flags'>): string | undefined {
  const sound = chosenSound(state)
  return sound !== undefined && alerts(state, event, 'audible') ? sound : undefined
}
