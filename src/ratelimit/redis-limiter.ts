// Cluster-wide sliding-window log in Redis: one list of recent call times per
// key and rule, checked and appended atomically by a Lua script. The lists of
// one key share the hash tag `{<key>}`, so on a Redis Cluster the script's
// keys are in one slot.
import type { RateDecision, RateLimiter, RateRule } from './limiter.js'
import { decide } from './limiter.js'
import type { RedisClient } from '../redis-connection.js'

// KEYS: one list per rule. ARGV: now, then (windowMs, maxCalls) per rule.
// Returns each list's timestamps (oldest first) as read before appending,
// appending `now` to every list only when no rule is exceeded.
const SCRIPT = `
local now = tonumber(ARGV[1])
local out = {}
local allowed = true
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 * i])
  local max = tonumber(ARGV[2 * i + 1])
  local items = redis.call('LRANGE', key, 0, -1)
  local recent = {}
  for _, ts in ipairs(items) do
    if tonumber(ts) > now - window then table.insert(recent, ts) end
  end
  if #recent >= max then allowed = false end
  out[i] = recent
end
if allowed then
  for i, key in ipairs(KEYS) do
    local window = tonumber(ARGV[2 * i])
    local max = tonumber(ARGV[2 * i + 1])
    redis.call('RPUSH', key, ARGV[1])
    redis.call('LTRIM', key, -max, -1)
    redis.call('PEXPIRE', key, window)
  end
end
return out
`

export class RedisRateLimiter implements RateLimiter {
  /** Runs on the backends' connection (backends/index.ts), which outlives it. */
  constructor(private readonly redis: RedisClient, private readonly prefix: string) {
    redis.defineCommand('roostRateHit', { lua: SCRIPT })
  }

  private keys(key: string, rules: RateRule[]): string[] {
    return rules.map((r) => `${this.prefix}:rl:{${key}}:${r.windowSeconds}:${r.maxCalls}`)
  }

  async hit(key: string, rules: RateRule[], nowMs: number): Promise<RateDecision> {
    const keys = this.keys(key, rules)
    const args = rules.flatMap((r) => [r.windowSeconds * 1000, r.maxCalls])
    const run = (this.redis as unknown as { roostRateHit(n: number, ...a: (string | number)[]): Promise<string[][]> }).roostRateHit
    const logs = await run.call(this.redis, keys.length, ...keys, nowMs, ...args)
    return decide(rules, logs.map((l) => l.map(Number)), nowMs)
  }

  async peek(key: string, rules: RateRule[], nowMs: number): Promise<RateDecision> {
    const keys = this.keys(key, rules)
    const logs = await Promise.all(keys.map((k) => this.redis.lrange(k, 0, -1)))
    return decide(rules, logs.map((l) => l.map(Number)), nowMs)
  }

  async close(): Promise<void> {}
}
