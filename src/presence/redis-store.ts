// Presence in Redis: `<prefix>:presence:{<realm>}` is a hash of
// user ID → "activeTime,lastConnectedTime,updateId" (-1 = never active) and
// `<prefix>:presence:{<realm>}:seq` the realm's update sequence. Each report is
// one Lua call, so concurrent reports from several nodes serialize; the hash
// tag keeps a realm's two keys in one slot of a Redis Cluster.
import type { RedisClient } from '../backends/redis-connection.js'
import { PRESENCE_UPDATE_MIN_FREQ_SECONDS, type PresenceReport, type PresenceRow, type PresenceStatus, type PresenceStore } from './store.js'

const PARSE = `
local function parse(raw)
  if not raw then return nil end
  local a, c, i = string.match(raw, '^(-?%d+),(-?%d+),(-?%d+)$')
  return tonumber(a), tonumber(c), tonumber(i)
end`

// Mirrors nextPresence() in store.ts.
const REPORT = `${PARSE}
local raw = redis.call('HGET', KEYS[1], ARGV[1])
local now, freq = tonumber(ARGV[3]), tonumber(ARGV[4])
local active, connected = -1, -1
if raw then active, connected = parse(raw) end
local bumpActive = ARGV[2] == 'active' and (active < 0 or now - active >= freq)
local bumpConnected = bumpActive or connected < 0 or now - connected >= freq
if not bumpActive and not bumpConnected then return {raw or '', raw or '', 0} end
if bumpActive then active = now end
if bumpConnected then connected = now end
local id = redis.call('INCR', KEYS[2])
local value = string.format('%d,%d,%d', active, connected, id)
redis.call('HSET', KEYS[1], ARGV[1], value)
return {raw or '', value, 1}`

const REPLACE = `
local id = redis.call('INCR', KEYS[2])
local value = string.format('%d,%d,%d', tonumber(ARGV[2]), tonumber(ARGV[3]), id)
redis.call('HSET', KEYS[1], ARGV[1], value)
return value`

function parseRow(userId: number, raw: string | null | undefined): PresenceRow | null {
  if (!raw) return null
  const [active, connected, id] = raw.split(',').map(Number)
  return { userId, activeTime: active === undefined || active < 0 ? null : active, lastConnectedTime: connected ?? 0, updateId: id ?? 0 }
}

export class RedisPresenceStore implements PresenceStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private keys(realmId: number): [string, string] {
    const key = `${this.prefix}:presence:{${realmId}}`
    return [key, `${key}:seq`]
  }

  async report(realmId: number, userId: number, status: PresenceStatus, now: number): Promise<PresenceReport> {
    const [before, after, written] = (await this.redis.eval(REPORT, 2, ...this.keys(realmId), userId, status, Math.floor(now), PRESENCE_UPDATE_MIN_FREQ_SECONDS)) as [
      string,
      string,
      number,
    ]
    return { before: parseRow(userId, before), after: parseRow(userId, after) as PresenceRow, written: written === 1 }
  }

  async replace(realmId: number, userId: number, activeTime: number | null, lastConnectedTime: number): Promise<PresenceRow> {
    const value = (await this.redis.eval(REPLACE, 2, ...this.keys(realmId), userId, activeTime ?? -1, Math.floor(lastConnectedTime))) as string
    return parseRow(userId, value) as PresenceRow
  }

  async get(realmId: number, userId: number): Promise<PresenceRow | null> {
    return parseRow(userId, await this.redis.hget(this.keys(realmId)[0], String(userId)))
  }

  async list(realmId: number): Promise<PresenceRow[]> {
    const all = await this.redis.hgetall(this.keys(realmId)[0])
    return Object.entries(all).flatMap(([id, raw]) => parseRow(Number(id), raw) ?? [])
  }
}
