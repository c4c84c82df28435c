// The polling loop every node runs for durable work claimed in the database
// (scheduled messages, missed-message emails, push notifications; jobs/leased.ts): on each tick, `step()` claims
// and settles a batch, and runs again while it settled something. A backend
// outage is logged once when it starts, not on every tick; `stop()` waits for
// the step in progress.
import type { FastifyBaseLogger } from 'fastify'
import { isBackendUnavailable } from '../unavailable.js'

export interface WorkerLoop {
  stop(): Promise<void>
}

export function startWorkerLoop(step: () => Promise<number>, options: { log: FastifyBaseLogger; tickMs: number; name: string }): WorkerLoop {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let unavailable = false

  const tick = () => {
    running = (async () => {
      try {
        while (!stopped && (await step()) > 0) {
          // keep going while work is due
        }
        unavailable = false
      } catch (error) {
        if (!isBackendUnavailable(error)) options.log.error({ err: error }, `${options.name} loop error`)
        else if (!unavailable) options.log.warn({ err: error }, `${options.name} paused: a backend is unavailable`)
        unavailable = isBackendUnavailable(error)
      }
    })()
    void running.then(() => {
      if (!stopped) {
        timer = setTimeout(tick, options.tickMs)
        timer.unref()
      }
    })
  }
  timer = setTimeout(tick, 0)
  timer.unref()

  return {
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
