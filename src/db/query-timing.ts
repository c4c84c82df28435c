// The time each PostgreSQL statement takes, as the pool's clients see it (the
// roost_db_query_duration_seconds histogram): every client the pool hands out
// has its query() timed once, whoever calls it (Prisma's adapter, the fast
// reads, raw sessions). Cursors and other submittables are not timed.
import type pg from 'pg'

type Observer = (seconds: number) => void
type Query = (...args: unknown[]) => unknown

const observersOf = new WeakMap<pg.Pool, Set<Observer>>()
const timed = new WeakSet<object>()

/** Calls `observe` with the seconds of every statement run through `pool` from now on; returns a function that stops it. */
export function timeQueries(pool: pg.Pool, observe: Observer): () => void {
  let observers = observersOf.get(pool)
  if (!observers) {
    const set = new Set<Observer>()
    observers = set
    observersOf.set(pool, set)
    const report = (start: number) => {
      const seconds = (performance.now() - start) / 1000
      for (const o of set) o(seconds)
    }
    pool.on('acquire', (client) => {
      if (timed.has(client)) return
      timed.add(client)
      const query = client.query.bind(client) as Query
      const wrapped: Query = (...args) => {
        const first = args[0] as { submit?: unknown } | undefined
        if (set.size === 0 || (typeof first === 'object' && first !== null && typeof first.submit === 'function')) return query(...args)
        const start = performance.now()
        const last = args.at(-1)
        if (typeof last === 'function') {
          args[args.length - 1] = (...result: unknown[]) => {
            report(start)
            ;(last as (...r: unknown[]) => unknown)(...result)
          }
          return query(...args)
        }
        const result = query(...args)
        if (result instanceof Promise) result.then(() => report(start), () => report(start))
        return result
      }
      ;(client as unknown as { query: Query }).query = wrapped
    })
  }
  observers.add(observe)
  return () => observers.delete(observe)
}
