// Prisma's transaction client presented as a PrismaClient, for code written
// against PrismaClient that must run inside one transaction (the scheduled
// delivery worker, the register snapshot). A nested `$transaction(fn)` runs
// `fn` in the same transaction.
import type { PrismaClient, Tx } from './index.js'

export function transactionAsClient(tx: Tx): PrismaClient {
  const runInside = <T>(fn: (inner: Tx) => Promise<T>): Promise<T> => fn(tx)
  const client = new Proxy(tx, {
    get(target, property) {
      if (property === '$transaction') return runInside
      const value: unknown = Reflect.get(target, property)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
  return client as unknown as PrismaClient
}
