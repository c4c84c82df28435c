// The event poller: POST /register, then GET /events in a loop, applying
// every event to the store. Network errors back off (1 s doubling to 30 s,
// with jitter); BAD_EVENT_QUEUE_ID re-registers and refetches the open view.
import { apply } from '../model/apply.js'
import { FETCH_EVENT_TYPES, REGISTERED_EVENT_TYPES, type AppEvent } from '../model/events.js'
import { fromRegister, type RegisterResponse } from '../model/state.js'
import { store } from '../lib/store.js'
import { ApiError, call, sessionGone } from './client.js'

const CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: false,
  stream_typing_notifications: true,
  user_settings_object: true,
}

export function registerQueue(): Promise<RegisterResponse> {
  return call<RegisterResponse>('POST', '/register', {
    event_types: REGISTERED_EVENT_TYPES,
    fetch_event_types: FETCH_EVENT_TYPES,
    client_capabilities: CAPABILITIES,
    include_subscribers: true,
    slim_presence: true,
    apply_markdown: true,
    client_gravatar: false,
  })
}

type Listener = (events: AppEvent[]) => void

export class EventPoller {
  private stopped = false
  private abort: AbortController | undefined
  private listeners = new Set<Listener>()

  constructor(private readonly onReregistered: () => void) {}

  /** Called with each batch after it is applied (notifications, the open view). */
  onEvents(listener: Listener): void {
    this.listeners.add(listener)
  }

  async start(): Promise<void> {
    await this.register()
    void this.loop()
  }

  stop(): void {
    this.stopped = true
    this.abort?.abort()
  }

  private async register(): Promise<void> {
    let delay = 1000
    for (;;) {
      try {
        const reg = await registerQueue()
        store.change((s) => {
          s.state = fromRegister(reg)
          s.lists = new Map()
          s.connection = 'connected'
        })
        return
      } catch (error) {
        if (error instanceof ApiError && sessionGone(error.status, error.code)) throw error
        store.change((s) => (s.connection = 'reconnecting'))
        await sleep(delay)
        delay = Math.min(delay * 2, 30_000)
      }
    }
  }

  private async loop(): Promise<void> {
    let delay = 1000
    while (!this.stopped) {
      const state = store.snapshot.state
      if (!state) return
      this.abort = new AbortController()
      try {
        const res = await call<{ events: (AppEvent & { id: number })[] }>('GET', '/events', { queue_id: state.queueId, last_event_id: state.lastEventId }, { signal: this.abort.signal })
        delay = 1000
        if (res.events.length > 0 || store.snapshot.connection !== 'connected') {
          store.change((s) => {
            s.connection = 'connected'
            for (const event of res.events) if (s.state) apply(s.state, s.lists, event)
          })
          for (const l of this.listeners) l(res.events)
        }
      } catch (error) {
        if (this.stopped) return
        if (error instanceof ApiError && error.code === 'BAD_EVENT_QUEUE_ID') {
          await this.register()
          this.onReregistered()
          continue
        }
        if (error instanceof ApiError && sessionGone(error.status, error.code)) return
        store.change((s) => (s.connection = 'reconnecting'))
        await sleep(delay * (0.75 + Math.random() / 2))
        delay = Math.min(delay * 2, 30_000)
      }
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
