// Lua scripts of the EXPERIMENTAL per-user queue store (redis-user-store.ts):
// one Redis stream per user, each queue a cursor over it. Measured against
// the per-queue layout (lua.ts) for issue 14; see bench/README.md.
//
// Layout (P = the configured prefix; U = "P:u:{<user_id>}:", so every key of
// a user's queues and the user's stream share one Redis Cluster slot, the
// same slot as the user's index set P:uq:{<user_id>}):
//   U e              stream of the user's events. Entry ID "<seq>-1" (seq from U m "seq").
//                    Fields: per target queue "<n>" (the queue's number) = "<first_id>:<v>,<v>…"
//                    (its event IDs from first_id, one per listed variant), then per
//                    variant used "j<v>" = event JSON without "id". Filtering happens
//                    on write: an entry names only the queues that accepted it, with
//                    their own transformed variants and their own IDs.
//   U m              hash: seq (last stream seq), qn (queue number counter)
//   U p              sorted set: per queue, member queue_id, score the seq of the newest
//                    entry this queue has passed (every event of it for this queue
//                    acknowledged). The stream is trimmed to the lowest score of a live
//                    queue (ZRANGE 0 0; collected queues' members are dropped as met),
//                    so a trim costs O(log queues), not O(queues).
//   U c:<queue_id>   hash, the queue's cursor { n, last: last issued ID, pruned: newest
//                    acknowledged ID }; its TTL is the queue's life
//   U h:<queue_id>   holder of the long-poll: "<node_id>|<token>"
//   U w:<queue_id>   set of watcher node IDs (as in lua.ts)
//   P:d:{<queue_id>}    descriptor JSON: how any node finds a queue's user from its ID
//                       (its own slot; TTL the queue's life plus a slack, extended)
//   P:d:{<queue_id>}:s  the database snapshot of the queue's register state
//   P:uq:{<user_id>}, P:r:{<realm_id>}:public, channels: as in lua.ts
// IDs: each queue's IDs are its own (HINCRBY of its cursor), from 0, consecutive;
// the stream's seq is only the position in the user's stream.
import { LuaScript, WakingScript, WAKE } from './lua.js'

const EXTEND_TTL = `
local function extend(key, ttl)
  local t = redis.call('PTTL', key)
  if t == -1 or (t >= 0 and t < ttl) then redis.call('PEXPIRE', key, ttl) end
end
`

const TELL_PRUNED = `
local function tell_pruned(watchersKey, selfNode, chan, qid, upTo)
  for _, node in ipairs(redis.call('SMEMBERS', watchersKey)) do
    if node ~= selfNode then publish(chan .. node, 'p ' .. qid .. ' ' .. upTo) end
  end
end
`

/**
 * scan(stream, n, pos, after, upTo): reads the user's stream after position
 * pos; returns the events of queue n with IDs above \`after\` (flat id, json;
 * none when after is nil) and the position the queue can move to: the last
 * entry before the first one holding an event of the queue above upTo.
 * trim(meta, stream, base): trims the stream to the lowest position of a live
 * queue, dropping collected queues' positions on the way (deletes the stream
 * when no queue is left).
 */
const SCAN_TRIM = `
local function scan(streamKey, n, pos, after, upTo)
  local events = {}
  local newPos = pos
  local blocked = false
  for _, entry in ipairs(redis.call('XRANGE', streamKey, string.format('%d', pos + 1), '+')) do
    local seq = tonumber(string.match(entry[1], '^%d+'))
    local f = entry[2]
    local mine = nil
    for i = 1, #f, 2 do
      if f[i] == n then mine = f[i + 1] break end
    end
    if mine then
      local first = tonumber(string.match(mine, '^(%d+):'))
      local id = first
      for v in string.gmatch(string.sub(mine, #tostring(first) + 2), '%d+') do
        if after and id > after then
          local key = 'j' .. v
          for i = 1, #f, 2 do
            if f[i] == key then
              events[#events + 1] = tostring(id)
              events[#events + 1] = f[i + 1]
              break
            end
          end
        end
        if id > upTo then blocked = true end
        id = id + 1
      end
    end
    if not blocked then newPos = seq end
  end
  return events, newPos
end
local function posKey(metaKey)
  return string.sub(metaKey, 1, -2) .. 'p'
end
local function trim(metaKey, streamKey, base)
  local pk = posKey(metaKey)
  while true do
    local lowest = redis.call('ZRANGE', pk, 0, 0, 'WITHSCORES')
    if #lowest == 0 then
      redis.call('DEL', streamKey)
      return
    end
    if redis.call('EXISTS', base .. 'c:' .. lowest[1]) == 1 then
      redis.call('XTRIM', streamKey, 'MINID', '=', string.format('%d', tonumber(lowest[2]) + 1))
      return
    end
    redis.call('ZREM', pk, lowest[1])
  end
end
local function advance(metaKey, streamKey, base, qid, pos, newPos)
  if newPos > pos then
    redis.call('ZADD', posKey(metaKey), newPos, qid)
    trim(metaKey, streamKey, base)
  end
end
`

/** KEYS cursor, meta, stream, holder, watchers (one queue's); ARGV ttlMs. */
const REFRESH = `
local function refresh(ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
  extend(KEYS[2], ttl)
  extend(posKey(KEYS[2]), ttl)
  if redis.call('EXISTS', KEYS[3]) == 1 then extend(KEYS[3], ttl) end
  if redis.call('PTTL', KEYS[4]) >= 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
  if redis.call('EXISTS', KEYS[5]) == 1 then redis.call('PEXPIRE', KEYS[5], ttl) end
end
`

/** KEYS cursor, meta, stream; ARGV queueId, ttlMs. The queue starts at the stream's current end. */
export const CREATE_U = new LuaScript(`${EXTEND_TTL}
local ttl = tonumber(ARGV[2])
local n = redis.call('HINCRBY', KEYS[2], 'qn', 1)
redis.call('HSET', KEYS[1], 'n', n, 'last', -1, 'pruned', -1)
redis.call('PEXPIRE', KEYS[1], ttl)
local pk = string.sub(KEYS[2], 1, -2) .. 'p'
redis.call('ZADD', pk, redis.call('HGET', KEYS[2], 'seq') or '0', ARGV[1])
extend(KEYS[2], ttl)
extend(pk, ttl)
if redis.call('EXISTS', KEYS[3]) == 1 then extend(KEYS[3], ttl) end
return 1
`)

/**
 * KEYS cursor, meta, stream, holder, watchers; ARGV lastEventId, ttlMs, watcherNodeId ('' for none),
 * nodeChannelPrefix, queueId, readingNodeId, base (U). Returns as FETCH in lua.ts.
 */
export const FETCH_U = new WakingScript(`${EXTEND_TTL}${TELL_PRUNED}${SCAN_TRIM}${REFRESH}
if redis.call('EXISTS', KEYS[1]) == 0 then return {'gone'} end
local last = tonumber(ARGV[1])
local c = redis.call('HMGET', KEYS[1], 'n', 'last', 'pruned')
local n, issued, pruned = c[1], tonumber(c[2]), tonumber(c[3])
if last < pruned then return {'pruned', tostring(pruned)} end
if last > issued then return {'ahead'} end
local pos = tonumber(redis.call('ZSCORE', posKey(KEYS[2]), ARGV[5]) or '0')
local events, newPos = scan(KEYS[3], n, pos, last, last)
if last > pruned then
  redis.call('HSET', KEYS[1], 'pruned', last)
  tell_pruned(KEYS[5], ARGV[6], ARGV[4], ARGV[5], last)
end
advance(KEYS[2], KEYS[3], ARGV[7], ARGV[5], pos, newPos)
refresh(tonumber(ARGV[2]))
if ARGV[3] ~= '' then
  redis.call('SADD', KEYS[5], ARGV[3])
  redis.call('PEXPIRE', KEYS[5], tonumber(ARGV[2]))
end
return {'ok', events, tostring(issued)}
`)

/**
 * KEYS cursor, meta, stream, holder, watchers; ARGV ttlMs, pruneUpTo ('' for none), base, queueId.
 * Refreshes the queue's life, records what a poll answered from memory acknowledged, moves the
 * queue's position on; 0 when the queue is gone.
 */
export const TOUCH_U = new LuaScript(`${EXTEND_TTL}${SCAN_TRIM}${REFRESH}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local c = redis.call('HMGET', KEYS[1], 'n', 'last', 'pruned')
local n, issued, pruned = c[1], tonumber(c[2]), tonumber(c[3])
if ARGV[2] ~= '' then
  local upTo = tonumber(ARGV[2])
  if upTo > pruned and upTo <= issued then
    redis.call('HSET', KEYS[1], 'pruned', upTo)
    pruned = upTo
  end
end
local pos = tonumber(redis.call('ZSCORE', posKey(KEYS[2]), ARGV[4]) or '0')
local _, newPos = scan(KEYS[3], n, pos, nil, pruned)
advance(KEYS[2], KEYS[3], ARGV[3], ARGV[4], pos, newPos)
refresh(tonumber(ARGV[1]))
return 1
`)

/**
 * KEYS cursor, meta, stream, holder, watchers; ARGV ttlMs, upTo, nodeChannelPrefix, queueId, selfNode, base.
 * As ACK in lua.ts: 1, 0 when gone, -1 when already pruned past upTo.
 */
export const ACK_U = new WakingScript(`${EXTEND_TTL}${TELL_PRUNED}${SCAN_TRIM}${REFRESH}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local upTo = tonumber(ARGV[2])
local c = redis.call('HMGET', KEYS[1], 'n', 'last', 'pruned')
local n, issued, pruned = c[1], tonumber(c[2]), tonumber(c[3])
if upTo < pruned or upTo > issued then return -1 end
if upTo > pruned then
  redis.call('HSET', KEYS[1], 'pruned', upTo)
  local pos = tonumber(redis.call('ZSCORE', posKey(KEYS[2]), ARGV[4]) or '0')
  local _, newPos = scan(KEYS[3], n, pos, nil, upTo)
  advance(KEYS[2], KEYS[3], ARGV[6], ARGV[4], pos, newPos)
  tell_pruned(KEYS[5], ARGV[5], ARGV[3], ARGV[4], upTo)
end
refresh(tonumber(ARGV[1]))
return 1
`)

/**
 * KEYS the meta key of each user ("U m"; on a cluster, users of one slot).
 * ARGV maxEvents, nodeChannelPrefix, variantCount, the variants, then per
 * user: base (U), queue count, then per queue: queueId and its variant
 * numbers, comma-separated. Per user: each accepting queue's events get its
 * next IDs; one stream entry holds them all (one per 2,000 queues: Lua's
 * unpack() cannot pass more fields to XADD). Returns, per queue in argument
 * order, the first ID, -1 (gone) or -2 (dropped past maxEvents). Wake-ups as
 * APPEND in lua.ts (same message format, so known-states.ts applies).
 */
export const APPEND_U = new WakingScript(`${EXTEND_TTL}${SCAN_TRIM}${WAKE}
local ENTRY_QUEUES = 2000
local max = tonumber(ARGV[1])
local variantCount = tonumber(ARGV[3])
local jsons = {}
for v = 1, variantCount do jsons[v] = ARGV[3 + v] end
local out = {}
local a = 4 + variantCount
for _, meta in ipairs(KEYS) do
  local base = ARGV[a]
  local count = tonumber(ARGV[a + 1])
  a = a + 2
  local streamKey = base .. 'e'
  local fields = {}
  local used = {}
  local inEntry = 0
  local maxTtl = -1
  local pending = {}
  local dropped = false
  -- One entry per ENTRY_QUEUES queues at most (unpack() is limited to a few thousand values).
  local function flush()
    if inEntry == 0 then return end
    local seq = redis.call('HINCRBY', meta, 'seq', 1)
    for v = 1, variantCount do
      if used[v] then
        fields[#fields + 1] = 'j' .. v
        fields[#fields + 1] = jsons[v]
      end
    end
    redis.call('XADD', streamKey, seq .. '-1', unpack(fields))
    fields = {}
    used = {}
    inEntry = 0
  end
  for _ = 1, count do
    local qid = ARGV[a]
    local nums = ARGV[a + 1]
    a = a + 2
    local cursor = base .. 'c:' .. qid
    local ttl = redis.call('PTTL', cursor)
    if ttl < 0 then
      out[#out + 1] = -1
    else
      local variants = {}
      for v in string.gmatch(nums, '%d+') do variants[#variants + 1] = tonumber(v) end
      local lastId = redis.call('HINCRBY', cursor, 'last', #variants)
      local first = lastId - #variants + 1
      local c = redis.call('HMGET', cursor, 'n', 'pruned')
      local holderKey, watchersKey = base .. 'h:' .. qid, base .. 'w:' .. qid
      if lastId - tonumber(c[2]) > max then
        wake_readers(holderKey, watchersKey, qid)
        redis.call('DEL', cursor, watchersKey)
        redis.call('ZREM', posKey(meta), qid)
        dropped = true
        out[#out + 1] = -2
      else
        fields[#fields + 1] = c[1]
        fields[#fields + 1] = first .. ':' .. table.concat(variants, ',')
        for _, v in ipairs(variants) do used[v] = true end
        if ttl > maxTtl then maxTtl = ttl end
        pending[#pending + 1] = { holderKey, watchersKey, qid, first, variants }
        out[#out + 1] = first
        inEntry = inEntry + 1
        if inEntry >= ENTRY_QUEUES then flush() end
      end
    end
  end
  flush()
  if #pending > 0 then
    extend(meta, maxTtl)
    extend(posKey(meta), maxTtl)
    extend(streamKey, maxTtl)
    for _, p in ipairs(pending) do send_events(p[1], p[2], p[3], p[4], p[5], jsons) end
  end
  if dropped then trim(meta, streamKey, base) end
end
send_wakes(ARGV[2])
return out
`)

/**
 * KEYS cursor, meta, stream, holder, watchers; ARGV nodeChannelPrefix, queueId, base.
 * Returns 1 when the queue existed; wakes its holder and watchers; trims the user's stream.
 */
export const REMOVE_U = new WakingScript(`${SCAN_TRIM}${WAKE}
local existed = redis.call('DEL', KEYS[1])
if existed == 1 then wake_readers(KEYS[4], KEYS[5], ARGV[2]) end
redis.call('DEL', KEYS[4], KEYS[5])
redis.call('ZREM', posKey(KEYS[2]), ARGV[2])
trim(KEYS[2], KEYS[3], ARGV[3])
send_wakes(ARGV[1])
return existed
`)
