// Plays the notification sounds (model/sounds.ts's notes) with the Web Audio
// API. Browsers let a page start audio only after a user gesture: the audio
// context is made, or resumed, at the user's first click or key press; a
// sound asked for before any gesture is dropped, quietly.
import { SOUND_NOTES, type Note } from '../model/sounds.js'

let context: AudioContext | undefined

/** The page's one audio context, made on first use; undefined where the browser has none or refuses it. */
function audio(): AudioContext | undefined {
  if (context || typeof AudioContext === 'undefined') return context
  try {
    context = new AudioContext()
  } catch {
    return undefined
  }
  return context
}

/** Whether the page has had a user gesture (browsers without the API are given the benefit of the doubt). */
const activated = () => typeof navigator === 'undefined' || navigator.userActivation?.hasBeenActive !== false

/** Until the audio context runs: at each click or key press, make or resume it. `wanted` says whether sounds may play at all. Returns the remover. */
export function unlockAudioOnGesture(wanted: () => boolean): () => void {
  const events = ['pointerdown', 'keydown'] as const
  const remove = () => events.forEach((e) => window.removeEventListener(e, unlock, true))
  function unlock() {
    if (!wanted()) return
    const c = audio()
    if (!c) return remove()
    if (c.state === 'running') return remove()
    c.resume().then(() => c.state === 'running' && remove(), () => undefined)
  }
  events.forEach((e) => window.addEventListener(e, unlock, { capture: true, passive: true }))
  return remove
}

/** How long after it was asked for a sound still plays once the context resumes. */
const STALE_MS = 1000

/** Plays the named sound now; nothing for `none`, an unknown name, or a page that may not play audio yet. Never throws. */
export function playSound(name: string): void {
  const notes = SOUND_NOTES[name]
  if (!notes) return
  if (!context && !activated()) return
  const c = audio()
  if (!c) return
  if (c.state === 'running') return schedule(c, notes)
  const asked = Date.now()
  c.resume().then(
    () => c.state === 'running' && Date.now() - asked < STALE_MS && schedule(c, notes),
    () => undefined,
  )
}

function schedule(c: AudioContext, notes: readonly Note[]): void {
  try {
    const start = c.currentTime + 0.02
    for (const n of notes) {
      const t0 = start + n.at
      const osc = c.createOscillator()
      osc.type = n.wave
      osc.frequency.value = n.frequency
      const gain = c.createGain()
      gain.gain.setValueAtTime(0.0001, t0)
      gain.gain.linearRampToValueAtTime(n.gain, t0 + n.attack)
      gain.gain.exponentialRampToValueAtTime(0.0001, t0 + n.attack + n.decay)
      osc.connect(gain).connect(c.destination)
      osc.start(t0)
      osc.stop(t0 + n.attack + n.decay + 0.05)
      osc.onended = () => gain.disconnect()
    }
  } catch {
    // A closed or broken context: no sound, and nothing else changes.
  }
}
