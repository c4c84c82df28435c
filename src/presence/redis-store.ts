// Presence in Redis: `<prefix>:presence:{<realm>}` is a hash of
// user ID → "activeTime,lastConnectedTime,updateId" (-1 = never active),
// `<prefix>:presence:{<realm>}:seq` the realm's update sequence and
// `<prefix>:presence:{<realm>}:ids` a sorted set of user IDs scored by the
// update ID of their row, so the rows written since an update are found
// without reading the whole hash (changedSince). Each write is one Lua call,
// so concurrent reports from several nodes serialize; the hash tag keeps a
// realm's keys in one slot of a Redis Cluster.
import type { RedisClient } from '../redis-connection.js'
import { PRESENCE_UPDATE_MIN_FREQ_SECONDS, type PresenceChanges, type PresenceReport, type PresenceRow, type PresenceStatus, type PresenceStore } from './store.js'

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
redis.call('ZADD', KEYS[3], id, ARGV[1])
return {raw or '', value, 1}`

const REPLACE = `
local id = redis.call('INCR', KEYS[2])
local value = string.format('%d,%d,%d', tonumber(ARGV[2]), tonumber(ARGV[3]), id)
redis.call('HSET', KEYS[1], ARGV[1], value)
redis.call('ZADD', KEYS[3], id, ARGV[1])
return value`

/** Past this many changed rows the whole hash is cheaper to read than HMGET (and unpack() has a limit). */
const DELTA_MAX = 2000

// Returns {seq, {userId, value, userId, value, …}}: every row when ARGV[1] < 0
// or too many changed, else those scored above ARGV[1].
const CHANGED_SINCE = `
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
local after = tonumber(ARGV[1])
if seq <= after then return {seq, {}} end
if after >= 0 then
  local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. after, '+inf', 'LIMIT', 0, ${DELTA_MAX})
  if #ids < ${DELTA_MAX} then
    if #ids == 0 then return {seq, {}} end
    local values = redis.call('HMGET', KEYS[1], unpack(ids))
    local out = {}
    for i = 1, #ids do
      out[2 * i - 1] = ids[i]
      out[2 * i] = values[i] or ''
    end
    return {seq, out}
  end
end
return {seq, redis.call('HGETALL', KEYS[1])}`

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

  private keys(realmId: number): [string, string, string] {
    const key = `${this.prefix}:presence:{${realmId}}`
    return [key, `${key}:seq`, `${key}:ids`]
  }

  async report(realmId: number, userId: number, status: PresenceStatus, now: number): Promise<PresenceReport> {
    const [before, after, written] = (await this.redis.eval(REPORT, 3, ...this.keys(realmId), userId, status, Math.floor(now), PRESENCE_UPDATE_MIN_FREQ_SECONDS)) as [
      string,
      string,
      number,
    ]
    return { before: parseRow(userId, before), after: parseRow(userId, after) as PresenceRow, written: written === 1 }
  }

  async replace(realmId: number, userId: number, activeTime: number | null, lastConnectedTime: number): Promise<PresenceRow> {
    const value = (await this.redis.eval(REPLACE, 3, ...this.keys(realmId), userId, activeTime ?? -1, Math.floor(lastConnectedTime))) as string
    return parseRow(userId, value) as PresenceRow
  }

  async get(realmId: number, userId: number): Promise<PresenceRow | null> {
    return parseRow(userId, await this.redis.hget(this.keys(realmId)[0], String(userId)))
  }

  async list(realmId: number): Promise<PresenceRow[]> {
    const all = await this.redis.hgetall(this.keys(realmId)[0])
    return Object.entries(all).flatMap(([id, raw]) => parseRow(Number(id), raw) ?? [])
  }

  async changedSince(realmId: number, afterId: number): Promise<PresenceChanges> {
    const [seq, flat] = (await this.redis.eval(CHANGED_SINCE, 3, ...this.keys(realmId), Math.floor(afterId))) as [number, string[]]
    const rows: PresenceRow[] = []
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const row = parseRow(Number(flat[i]), flat[i + 1])
      // The whole hash may have been read: keep only what changed.
      if (row && row.updateId > afterId) rows.push(row)
    }
    return { seq: Number(seq), rows }
  }
}
