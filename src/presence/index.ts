// Presence: the store interface and its in-process implementation; the Redis
// one (redis-store.ts) is chosen with the other backends (backends/index.ts).
export * from './store.js'
