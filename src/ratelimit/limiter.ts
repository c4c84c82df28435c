// Upstream's rate limits: a sliding-window log per key and rule. Counted in
// Redis cluster-wide, or in-process when embedded (DESIGN.md RATE_LIMITING).

export interface RateRule {
  windowSeconds: number
  maxCalls: number
}

export interface RateDecision {
  allowed: boolean
  /** The smallest maxCalls of the rules applied (X-RateLimit-Limit). */
  limit: number
  remaining: number
  /** UNIX seconds when the oldest counted call leaves the tightest window (X-RateLimit-Reset). */
  resetAt: number
  /** Seconds until a call would be allowed again (0 when allowed). */
  retryAfter: number
}

export interface RateLimiter {
  /** Records a call for `key` unless it is over a rule's limit. */
  hit(key: string, rules: RateRule[], nowMs: number): Promise<RateDecision>
  /** Whether a call for `key` would be allowed now, recording nothing (logins check before verifying a password). */
  peek(key: string, rules: RateRule[], nowMs: number): Promise<RateDecision>
  close(): Promise<void>
}

export const RATE_RULES = {
  apiByUser: [{ windowSeconds: 60, maxCalls: 200 }],
  apiByIp: [{ windowSeconds: 60, maxCalls: 100 }],
  authenticateByUsername: [{ windowSeconds: 1800, maxCalls: 5 }],
  /** Failed password checks from one client address, whatever the account (stops spraying many accounts). */
  authenticateByIp: [{ windowSeconds: 1800, maxCalls: 50 }],
} satisfies Record<string, RateRule[]>

/** Decides from the timestamps (ms, newest last) already logged under each rule's window. */
export function decide(rules: RateRule[], logs: number[][], nowMs: number): RateDecision {
  let allowed = true
  let retryAfter = 0
  let limit = Number.POSITIVE_INFINITY
  let remaining = Number.POSITIVE_INFINITY
  let resetAt = Math.ceil(nowMs / 1000)
  rules.forEach((rule, i) => {
    const windowMs = rule.windowSeconds * 1000
    const recent = (logs[i] ?? []).filter((ts) => ts > nowMs - windowMs)
    if (recent.length >= rule.maxCalls) {
      allowed = false
      const nth = recent[recent.length - rule.maxCalls] as number
      retryAfter = Math.max(retryAfter, (nth + windowMs - nowMs) / 1000)
    }
    limit = Math.min(limit, rule.maxCalls)
    const left = Math.max(0, rule.maxCalls - recent.length - 1)
    if (left < remaining) {
      remaining = left
      const oldest = recent[0] ?? nowMs
      resetAt = Math.ceil((oldest + windowMs) / 1000)
    }
  })
  return { allowed, limit, remaining: allowed ? remaining : 0, resetAt, retryAfter }
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, number[]>()

  async hit(key: string, rules: RateRule[], nowMs: number): Promise<RateDecision> {
    const keys = rules.map((r) => `${key}:${r.windowSeconds}:${r.maxCalls}`)
    const logs = keys.map((k) => this.logs.get(k) ?? [])
    const decision = decide(rules, logs, nowMs)
    if (decision.allowed) {
      keys.forEach((k, i) => {
        const rule = rules[i] as RateRule
        const kept = (logs[i] as number[]).filter((ts) => ts > nowMs - rule.windowSeconds * 1000)
        kept.push(nowMs)
        this.logs.set(k, kept.slice(-rule.maxCalls))
      })
    }
    return decision
  }

  async peek(key: string, rules: RateRule[], nowMs: number): Promise<RateDecision> {
    return decide(rules, rules.map((r) => this.logs.get(`${key}:${r.windowSeconds}:${r.maxCalls}`) ?? []), nowMs)
  }

  async close(): Promise<void> {
    this.logs.clear()
  }
}

/** Never limits (RATE_LIMITING=off). */
export class NoRateLimiter implements RateLimiter {
  async hit(_key: string, rules: RateRule[], nowMs: number): Promise<RateDecision> {
    const limit = Math.min(...rules.map((r) => r.maxCalls))
    return { allowed: true, limit, remaining: limit, resetAt: Math.ceil(nowMs / 1000), retryAfter: 0 }
  }
  async peek(key: string, rules: RateRule[], nowMs: number): Promise<RateDecision> {
    return this.hit(key, rules, nowMs)
  }
  async close(): Promise<void> {}
}
