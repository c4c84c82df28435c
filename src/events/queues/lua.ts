// Lua scripts of the Redis queue store. Each runs atomically, so an event's
// ID, its append, the TTL and the wake-up of the polling node happen together.
//
// Layout (P = the configured prefix):
//   P:q:<queue_id>        descriptor JSON (string); its TTL is the queue's life
//   P:q:<queue_id>:m      hash { last: last issued event ID, pruned: newest acknowledged ID }
//   P:q:<queue_id>:e      sorted set of events, score = ID, member = event JSON (with "id")
//   P:q:<queue_id>:h      holder of the long-poll: "<node_id>|<token>"
//   P:q:<queue_id>:w      set of watcher node IDs: nodes that read the queue and keep
//                         what they read (see redis-store.ts, "known queue states")
//   P:uq:<user_id>        set of "<user_id>:<queue_id>" for the user's queues
//   P:r:<realm_id>:public set of "<user_id>:<queue_id>" for the realm's all_public_streams queues
//   channel P:node:<id>   signals for a node: "w <queue_id> [<queue_id>…]" (new events, or
//                         the queue is gone), "s <queue_id> <token>" (a newer poll took over)
//                         or "p <queue_id> <id>" (another node pruned the queue up to id)
//   channel P:items       every published bus item (for EventBus.subscribe)
// (APPEND builds the queue keys from P itself; the others take them as KEYS.)
// Every queue key carries the same TTL, refreshed on each touch: an untouched
// queue disappears cluster-wide with no sweeper. Index sets are cleaned lazily
// by publishers when a member's descriptor is gone. Index members carry the
// user ID so that one SUNION over the recipients finds every target queue and
// still tells which user set a stale member belongs to.
import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

export class LuaScript {
  readonly sha: string
  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex')
  }

  async run(redis: Redis, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (error instanceof Error && error.message.includes('NOSCRIPT')) return redis.eval(this.source, keys.length, ...keys, ...args)
      throw error
    }
  }
}

const EXTEND_TTL = `
local function extend(key, ttl)
  local t = redis.call('PTTL', key)
  if t == -1 or (t >= 0 and t < ttl) then redis.call('PEXPIRE', key, ttl) end
end
`

/** KEYS desc, meta, userSet, realmPublicSet; ARGV descJson, ttlMs, indexMember, allPublic(0|1). Returns the size of the user's set. */
export const CREATE = new LuaScript(`${EXTEND_TTL}
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('HSET', KEYS[2], 'last', -1, 'pruned', -1)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('SADD', KEYS[3], ARGV[3])
extend(KEYS[3], ttl)
if ARGV[4] == '1' then
  redis.call('SADD', KEYS[4], ARGV[3])
  extend(KEYS[4], ttl)
end
return redis.call('SCARD', KEYS[3])
`)

/**
 * Tells the other nodes watching a queue (they keep its unacknowledged events
 * in memory) that it was pruned up to `upTo`, on their channels: "p <queue_id> <upTo>".
 * Sent within the script that prunes, so before its caller can answer.
 */
const TELL_PRUNED = `
local function tell_pruned(watchersKey, selfNode, chan, qid, upTo)
  for _, node in ipairs(redis.call('SMEMBERS', watchersKey)) do
    if node ~= selfNode then redis.call('PUBLISH', chan .. node, 'p ' .. qid .. ' ' .. upTo) end
  end
end
`

/**
 * KEYS desc, meta, events, holder, userSet, realmPublicSet, watchers; ARGV lastEventId, ttlMs, watcherNodeId ('' for none),
 * then (optional) nodeChannelPrefix, queueId and the reading node's ID: the other watchers are told of the prune.
 * Returns {'ok', events, issued} (lastEventId is then the newest acknowledged ID) | {'pruned', id} | {'ahead'} | {'gone'}.
 */
export const FETCH = new LuaScript(`${EXTEND_TTL}${TELL_PRUNED}
if redis.call('EXISTS', KEYS[1]) == 0 then return {'gone'} end
local last = tonumber(ARGV[1])
local pruned = tonumber(redis.call('HGET', KEYS[2], 'pruned') or '-1')
local issued = tonumber(redis.call('HGET', KEYS[2], 'last') or '-1')
if last < pruned then return {'pruned', tostring(pruned)} end
if last > issued then return {'ahead'} end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', last)
redis.call('HSET', KEYS[2], 'pruned', last)
if last > pruned and ARGV[5] then tell_pruned(KEYS[7], ARGV[6] or '', ARGV[4], ARGV[5], last) end
local ttl = tonumber(ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
if redis.call('PTTL', KEYS[4]) >= 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
extend(KEYS[5], ttl)
if redis.call('EXISTS', KEYS[6]) == 1 then extend(KEYS[6], ttl) end
if ARGV[3] ~= '' then redis.call('SADD', KEYS[7], ARGV[3]) end
if redis.call('EXISTS', KEYS[7]) == 1 then redis.call('PEXPIRE', KEYS[7], ttl) end
return {'ok', redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. last, '+inf'), tostring(issued)}
`)

/** Refreshes every key of a queue to ARGV[1] ms (KEYS desc, meta, events, holder, userSet, realmPublicSet, watchers), as TOUCH and ACK do. */
const REFRESH_QUEUE_TTL = `local ttl = tonumber(ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ttl) end
if redis.call('PTTL', KEYS[4]) >= 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
extend(KEYS[5], ttl)
if redis.call('EXISTS', KEYS[6]) == 1 then extend(KEYS[6], ttl) end
if redis.call('EXISTS', KEYS[7]) == 1 then redis.call('PEXPIRE', KEYS[7], ttl) end
`

/**
 * KEYS desc, meta, events, holder, userSet, realmPublicSet, watchers; ARGV ttlMs, pruneUpTo ('' for none).
 * Refreshes the queue's life and prunes what a poll answered from memory acknowledged; 0 when the queue is gone.
 */
export const TOUCH = new LuaScript(`${EXTEND_TTL}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '' then
  local upTo = tonumber(ARGV[2])
  local pruned = tonumber(redis.call('HGET', KEYS[2], 'pruned') or '-1')
  local issued = tonumber(redis.call('HGET', KEYS[2], 'last') or '-1')
  if upTo > pruned and upTo <= issued then
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', upTo)
    redis.call('HSET', KEYS[2], 'pruned', upTo)
  end
end
${REFRESH_QUEUE_TTL}return 1
`)

/**
 * KEYS desc, meta, events, holder, userSet, realmPublicSet, watchers; ARGV ttlMs, upTo, nodeChannelPrefix, queueId, selfNode.
 * A poll answered from memory acknowledged the events up to `upTo`: prunes
 * them and refreshes the queue's life before the poll is answered, and tells
 * the other watching nodes. Returns 1, 0 when the queue is gone, or -1 when it
 * was already pruned past `upTo` (the poll must read the queue).
 */
export const ACK = new LuaScript(`${EXTEND_TTL}${TELL_PRUNED}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local upTo = tonumber(ARGV[2])
local pruned = tonumber(redis.call('HGET', KEYS[2], 'pruned') or '-1')
local issued = tonumber(redis.call('HGET', KEYS[2], 'last') or '-1')
if upTo < pruned or upTo > issued then return -1 end
if upTo > pruned then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', upTo)
  redis.call('HSET', KEYS[2], 'pruned', upTo)
  tell_pruned(KEYS[7], ARGV[5], ARGV[3], ARGV[4], upTo)
end
${REFRESH_QUEUE_TTL}return 1
`)

/**
 * Collects signals per node and sends one message per node, lines of:
 * "w <queue_id>" (something changed: read the queue again);
 * "v <n>" followed by a line with event JSON (without its ID): the variant n of
 * this append (each variant is sent to a node once, however many of its
 * queues get it); "e <queue_id> <first_id> <count>" followed by count lines
 * "@<n>": the appended events, with IDs from first_id, each a variant (JSON has
 * no raw newline). Past WAKE_PAYLOAD_MAX bytes for a node, only "w" lines are
 * added.
 */
const WAKE = `
local WAKE_PAYLOAD_MAX = 262144
local parts = {}
local sizes = {}
local defined = {}
local order = {}
local function node_parts(node)
  if not parts[node] then
    parts[node] = {}
    sizes[node] = 0
    defined[node] = {}
    order[#order + 1] = node
  end
  return parts[node]
end
local function add(node, line)
  local list = node_parts(node)
  list[#list + 1] = line
  sizes[node] = sizes[node] + #line + 1
end
local function readers(holderKey, watchersKey)
  local nodes = {}
  local seen = {}
  local holder = redis.call('GET', holderKey)
  if holder then
    local node = string.match(holder, '^([^|]*)|')
    if node then
      nodes[#nodes + 1] = node
      seen[node] = true
    end
  end
  for _, node in ipairs(redis.call('SMEMBERS', watchersKey)) do
    if not seen[node] then nodes[#nodes + 1] = node end
  end
  return nodes
end
local function wake_readers(holderKey, watchersKey, qid)
  for _, node in ipairs(readers(holderKey, watchersKey)) do add(node, 'w ' .. qid) end
end
-- variants: the variant numbers of the appended events; jsons: each variant's JSON.
local function send_events(holderKey, watchersKey, qid, first, variants, jsons)
  for _, node in ipairs(readers(holderKey, watchersKey)) do
    node_parts(node)
    local bytes = 0
    for _, v in ipairs(variants) do
      bytes = bytes + 8
      if not defined[node][v] then bytes = bytes + #jsons[v] + 8 end
    end
    if sizes[node] + bytes > WAKE_PAYLOAD_MAX then
      add(node, 'w ' .. qid)
    else
      for _, v in ipairs(variants) do
        if not defined[node][v] then
          defined[node][v] = true
          add(node, 'v ' .. v)
          add(node, jsons[v])
        end
      end
      add(node, 'e ' .. qid .. ' ' .. first .. ' ' .. #variants)
      for _, v in ipairs(variants) do add(node, '@' .. v) end
    end
  end
end
local function send_wakes(chan)
  for _, node in ipairs(order) do
    redis.call('PUBLISH', chan .. node, table.concat(parts[node], '\\n'))
  end
end
`

/**
 * No KEYS: the queues' keys are built here from the prefix (a fan-out names
 * hundreds of queues, and five key arguments per queue cost the publishing
 * node more than the append itself; the store runs on one Redis, not a
 * sharded cluster). ARGV prefix, maxEvents, nodeChannelPrefix, variantCount,
 * the variants (event JSON objects without "id", each passed once however many
 * queues get it), then per queue: queueId and the 1-based variant numbers of
 * its events, comma-separated.
 * Returns per queue: the first appended event's ID, -1 when the queue is gone, -2 when it
 * was dropped for exceeding maxEvents. Sends the
 * appended events (or, for a dropped queue, a wake-up) to each node holding or
 * watching the queue, one message per node.
 */
export const APPEND = new LuaScript(`${WAKE}
local prefix = ARGV[1] .. ':q:'
local max = tonumber(ARGV[2])
local jsons = {}
local bodies = {}
for v = 1, tonumber(ARGV[4]) do
  jsons[v] = ARGV[4 + v]
  bodies[v] = string.sub(jsons[v], 2)
end
local out = {}
local i = 0
for a = 5 + #bodies, #ARGV, 2 do
  i = i + 1
  local qid = ARGV[a]
  local q = prefix .. qid
  local ttl = redis.call('PTTL', q)
  if ttl < 0 then
    out[i] = -1
  else
    local meta, eventsKey, holderKey, watchersKey = q .. ':m', q .. ':e', q .. ':h', q .. ':w'
    local variants = {}
    local first = -1
    for v in string.gmatch(ARGV[a + 1], '%d+') do
      v = tonumber(v)
      local id = redis.call('HINCRBY', meta, 'last', 1)
      if first == -1 then first = id end
      redis.call('ZADD', eventsKey, id, '{"id":' .. id .. ',' .. bodies[v])
      variants[#variants + 1] = v
    end
    local size = redis.call('ZCARD', eventsKey)
    -- A new events key (all of it appended now) takes the queue's TTL; an existing one has it.
    if size == #variants then redis.call('PEXPIRE', eventsKey, ttl) end
    if size > max then
      wake_readers(holderKey, watchersKey, qid)
      redis.call('DEL', q, meta, eventsKey, watchersKey)
      out[i] = -2
    else
      send_events(holderKey, watchersKey, qid, first, variants, jsons)
      out[i] = first
    end
  end
end
send_wakes(ARGV[3])
return out
`)

/** KEYS desc, holder; ARGV holderValue, nodeChannelPrefix, queueId. Returns 0 when the queue is gone. */
export const PARK = new LuaScript(`
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
local old = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
if old and old ~= ARGV[1] then
  local node, token = string.match(old, '^([^|]*)|(.*)$')
  if node then redis.call('PUBLISH', ARGV[2] .. node, 's ' .. ARGV[3] .. ' ' .. token) end
end
return 1
`)

/** KEYS holder of each released poll; ARGV the holder value of each. Clears each mark still held by that poll. */
export const UNPARK = new LuaScript(`
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then redis.call('DEL', key) end
end
return 1
`)

/**
 * KEYS desc, meta, events, holder, userSet, realmPublicSet, watchers; ARGV indexMember, nodeChannelPrefix, queueId.
 * Returns 1 when the queue existed; wakes its holder and watchers so they see it gone.
 */
export const REMOVE = new LuaScript(`${WAKE}
local existed = redis.call('DEL', KEYS[1])
if existed == 1 then wake_readers(KEYS[4], KEYS[7], ARGV[3]) end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[7])
redis.call('SREM', KEYS[5], ARGV[1])
redis.call('SREM', KEYS[6], ARGV[1])
send_wakes(ARGV[2])
return existed
`)
