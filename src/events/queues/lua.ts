// Lua scripts of the Redis queue store. Each runs atomically, so an event's
// ID, its append, the TTL and the wake-up of the polling node happen together.
//
// Layout (P = the configured prefix; every key of a queue carries the hash
// tag {<queue_id>}, so they share one Redis Cluster slot and one script may
// name them all):
//   P:q:{<queue_id>}      descriptor JSON (string); its TTL is the queue's life
//   P:q:{<queue_id>}:m    hash, the queue's cursor { last: last issued event ID, pruned: newest acknowledged ID,
//                         total: bytes appended, acked: bytes acknowledged (absent: 0) }
//   P:q:{<queue_id>}:e    stream of the unacknowledged events: entry ID "<event_id>-1" (the
//                         event ID as the stream's millisecond part, so entry IDs increase as
//                         event IDs do; "-1" because 0-0 is not a valid entry ID), one field
//                         "e" = the event JSON without its "id". XADD appends, XRANGE from
//                         "<last_event_id + 1>" reads what follows an ID, XTRIM MINID
//                         "<acknowledged + 1>" prunes; its length is the unacknowledged
//                         backlog (the cap is checked against XLEN: trimming with MAXLEN
//                         would silently lose unacknowledged events, so past the cap the
//                         queue is dropped, as before). Created by the first append.
//                         A second field "c" holds the queue's byte total after the event:
//                         the cursor's "total" (bytes of every event JSON appended) when it
//                         was appended; a prune copies the last pruned entry's "c" into the
//                         cursor's "acked", so total - acked is the unacknowledged bytes,
//                         checked against the byte cap as XLEN is against the event cap.
//   P:q:{<queue_id>}:h    holder of the long-poll: "<node_id>|<token>"
//   P:q:{<queue_id>}:w    set of watcher node IDs: nodes that read the queue and keep
//                         what they read (see redis-store.ts, "known queue states")
//   P:q:{<queue_id>}:s    the database snapshot the queue's register state was read at
//   P:q:{<queue_id>}:x    "1" for DELETED_QUEUE_MEMORY_SECS after DELETE /events removed the
//                         queue (not after expiry or a cap): a poll held on it finishes normally
//   P:uq:{<user_id>}      set of "<user_id>:<queue_id>" for the user's queues
//   P:r:{<realm_id>}:public  set of "<user_id>:<queue_id>" for the realm's all_public_streams queues
//   channel P:node:<id>   signals for a node: "w <queue_id> [<queue_id>…]" (new events, or
//                         the queue is gone), "s <queue_id> <token>" (a newer poll took over)
//                         or "p <queue_id> <id>" (another node pruned the queue up to id)
//   channel P:items       every published bus item (for EventBus.subscribe)
// Every key of a queue carries the same TTL, refreshed on each touch: an
// untouched queue disappears cluster-wide with no sweeper. The index sets live
// in their own slots, so no script names them with a queue's keys: the store
// adds a queue to its indexes after creating it, refreshes their TTLs with
// plain PEXPIRE … GT beside the queue's touches, and publishers drop members
// whose descriptor is gone. Index members carry the user ID so that a member
// read from the realm's set still tells which user set it belongs to.
// Wake-ups (the node channels' messages): on one server, through Sentinel,
// and on a cluster without SPUBLISH, each script PUBLISHes them itself, so
// they leave Redis before the script's reply (RedisSignals' rememberStates
// relies on that order on one server); on a Redis Cluster plain PUBLISH is
// relayed to every node of the cluster. On a cluster that knows SPUBLISH each
// node's channel is a shard channel, which a script running in a queue's slot
// may not publish to (the channel has its own slot): there the script returns
// its wake-ups with its reply and the calling node SPUBLISHes them at once,
// so each message goes only to the shard owning the node's channel
// (WakingScript; the sender is wake-sender.ts). Every poll reads Redis on a
// cluster, so a wake-up arriving after the reply changes no answer.
import { createHash } from 'node:crypto'
import type { RedisClient } from '../../redis-connection.js'

export class LuaScript {
  readonly sha: string
  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex')
  }

  async run(redis: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (error instanceof Error && error.message.includes('NOSCRIPT')) return redis.eval(this.source, keys.length, ...keys, ...args)
      throw error
    }
  }
}

/** Where a script's wake-ups go. */
export interface WakeRoute {
  /** false: the script PUBLISHes them itself; true: it returns them and `send` publishes them (SPUBLISH). */
  readonly sharded: boolean
  /** Publishes wake-ups returned by a script: channel, message, channel, message… */
  send(wakes: string[]): Promise<void>
}

/**
 * A script that sends wake-ups, through `publish(channel, message)`, in two
 * variants: one publishing them within the script (PUBLISH), one returning
 * them beside the script's own reply ({reply, {channel, message…}}) for the
 * caller to send after it. `run` returns the script's own reply either way.
 * The source must return a value that is not nil.
 */
export class WakingScript {
  private readonly publishing: LuaScript
  private readonly returning: LuaScript

  constructor(source: string) {
    this.publishing = new LuaScript(`local function publish(channel, message) redis.call('PUBLISH', channel, message) end
${source}`)
    this.returning = new LuaScript(`local wakes = {}
local function publish(channel, message)
  wakes[#wakes + 1] = channel
  wakes[#wakes + 1] = message
end
local function main()
${source}
end
return {main(), wakes}
`)
  }

  /** The SHA1s of the two variants (EVALSHA's first argument). */
  get shas(): string[] {
    return [this.publishing.sha, this.returning.sha]
  }

  async run(redis: RedisClient, keys: string[], args: (string | number)[], route: WakeRoute): Promise<unknown> {
    if (!route.sharded) return this.publishing.run(redis, keys, args)
    const [reply, wakes] = (await this.returning.run(redis, keys, args)) as [unknown, string[]]
    if (wakes.length > 0) await route.send(wakes)
    return reply
  }
}

const EXTEND_TTL = `
local function extend(key, ttl)
  local t = redis.call('PTTL', key)
  if t == -1 or (t >= 0 and t < ttl) then redis.call('PEXPIRE', key, ttl) end
end
`

/** KEYS desc, meta (one queue's); ARGV descJson, ttlMs. Creates the queue, with no events (the stream comes with the first). */
export const CREATE = new LuaScript(`
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('HSET', KEYS[2], 'last', -1, 'pruned', -1)
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
`)

/** KEYS an index set; ARGV member, ttlMs. Adds the member, extends the set's TTL to at least ttlMs; returns the set's size. */
export const INDEX_ADD = new LuaScript(`${EXTEND_TTL}
redis.call('SADD', KEYS[1], ARGV[1])
extend(KEYS[1], tonumber(ARGV[2]))
return redis.call('SCARD', KEYS[1])
`)

/**
 * Tells the other nodes watching a queue (they keep its unacknowledged events
 * in memory) that it was pruned up to `upTo`, on their channels: "p <queue_id> <upTo>".
 * Sent within the script that prunes, so before its caller can answer.
 */
const TELL_PRUNED = `
local function tell_pruned(watchersKey, selfNode, chan, qid, upTo)
  for _, node in ipairs(redis.call('SMEMBERS', watchersKey)) do
    if node ~= selfNode then publish(chan .. node, 'p ' .. qid .. ' ' .. upTo) end
  end
end
`

/**
 * Drops the stream entries of the events up to \`upTo\` (entry IDs below
 * "<upTo + 1>-0"), after recording in the cursor the byte total of the last
 * of them (its field "c") as the acknowledged bytes.
 */
const PRUNE = `
local function prune(streamKey, metaKey, upTo)
  local last = redis.call('XREVRANGE', streamKey, string.format('%d', upTo), '-', 'COUNT', 1)[1]
  if last and last[2][4] then redis.call('HSET', metaKey, 'acked', last[2][4]) end
  redis.call('XTRIM', streamKey, 'MINID', '=', string.format('%d', upTo + 1))
end
`

/** refresh_life(q, ttl): refreshes the life of the queue whose descriptor key is \`q\` (descriptor, cursor, stream, watchers) to \`ttl\` ms. */
const QUEUE_LIFE = `
local function refresh_life(q, ttl)
  redis.call('PEXPIRE', q, ttl)
  redis.call('PEXPIRE', q .. ':m', ttl)
  if redis.call('EXISTS', q .. ':e') == 1 then redis.call('PEXPIRE', q .. ':e', ttl) end
  if redis.call('EXISTS', q .. ':w') == 1 then redis.call('PEXPIRE', q .. ':w', ttl) end
end
`

/**
 * KEYS desc, meta, events, holder, watchers (one queue's); ARGV lastEventId, ttlMs, watcherNodeId ('' for none),
 * then (optional) nodeChannelPrefix, queueId and the reading node's ID: the other watchers are told of the prune.
 * Returns {'ok', {id, json, id, json…}, issued} (the events after lastEventId, JSON without "id"; lastEventId
 * is then the newest acknowledged ID) | {'pruned', id} | {'ahead'} | {'gone'}.
 */
export const FETCH = new WakingScript(`${TELL_PRUNED}${PRUNE}${QUEUE_LIFE}
if redis.call('EXISTS', KEYS[1]) == 0 then return {'gone'} end
local last = tonumber(ARGV[1])
local pruned = tonumber(redis.call('HGET', KEYS[2], 'pruned') or '-1')
local issued = tonumber(redis.call('HGET', KEYS[2], 'last') or '-1')
if last < pruned then return {'pruned', tostring(pruned)} end
if last > issued then return {'ahead'} end
if last > pruned then
  prune(KEYS[3], KEYS[2], last)
  redis.call('HSET', KEYS[2], 'pruned', last)
  if ARGV[5] then tell_pruned(KEYS[5], ARGV[6] or '', ARGV[4], ARGV[5], last) end
end
local ttl = tonumber(ARGV[2])
if ARGV[3] ~= '' then redis.call('SADD', KEYS[5], ARGV[3]) end
refresh_life(KEYS[1], ttl)
if redis.call('PTTL', KEYS[4]) >= 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
local events = {}
for _, entry in ipairs(redis.call('XRANGE', KEYS[3], string.format('%d', last + 1), '+')) do
  events[#events + 1] = string.match(entry[1], '^%d+')
  events[#events + 1] = entry[2][2]
end
return {'ok', events, tostring(issued)}
`)

/** Refreshes every key of a queue to ARGV[1] ms (KEYS desc, meta, events, holder, watchers), as TOUCH and ACK do (with QUEUE_LIFE). */
const REFRESH_QUEUE_TTL = `local ttl = tonumber(ARGV[1])
refresh_life(KEYS[1], ttl)
if redis.call('PTTL', KEYS[4]) >= 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
`

/**
 * KEYS desc, meta, events, holder, watchers (one queue's); ARGV ttlMs, pruneUpTo ('' for none).
 * Refreshes the queue's life and prunes what a poll answered from memory acknowledged; 0 when the queue is gone.
 */
export const TOUCH = new LuaScript(`${PRUNE}${QUEUE_LIFE}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '' then
  local upTo = tonumber(ARGV[2])
  local pruned = tonumber(redis.call('HGET', KEYS[2], 'pruned') or '-1')
  local issued = tonumber(redis.call('HGET', KEYS[2], 'last') or '-1')
  if upTo > pruned and upTo <= issued then
    prune(KEYS[3], KEYS[2], upTo)
    redis.call('HSET', KEYS[2], 'pruned', upTo)
  end
end
${REFRESH_QUEUE_TTL}return 1
`)

/**
 * acknowledge(q, upTo, self, chan, qid), shared by ACK and PARK_ACK: moves the
 * cursor of the queue whose descriptor key is \`q\` to \`upTo\`, prunes the
 * stream and tells the other watchers (not \`self\`); false, changing
 * nothing, when \`upTo\` is not between the acknowledged and the last issued ID.
 */
const ACKNOWLEDGE = `
local function acknowledge(q, upTo, self, chan, qid)
  local meta = q .. ':m'
  local cursor = redis.call('HMGET', meta, 'pruned', 'last')
  local pruned = tonumber(cursor[1] or '-1')
  local issued = tonumber(cursor[2] or '-1')
  if upTo < pruned or upTo > issued then return false end
  if upTo > pruned then
    prune(q .. ':e', meta, upTo)
    redis.call('HSET', meta, 'pruned', upTo)
    tell_pruned(q .. ':w', self, chan, qid, upTo)
  end
  return true
end
`

/**
 * KEYS desc, meta, events, holder, watchers (one queue's); ARGV ttlMs, upTo, nodeChannelPrefix, queueId, selfNode.
 * A poll answered from memory acknowledged the events up to \`upTo\`: prunes
 * them and refreshes the queue's life before the poll is answered, and tells
 * the other watching nodes. Returns 1, 0 when the queue is gone, or -1 when it
 * was already pruned past \`upTo\` (the poll must read the queue).
 */
export const ACK = new WakingScript(`${TELL_PRUNED}${PRUNE}${QUEUE_LIFE}${ACKNOWLEDGE}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if not acknowledge(KEYS[1], tonumber(ARGV[2]), ARGV[5], ARGV[3], ARGV[4]) then return -1 end
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
export const WAKE = `
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
    publish(chan .. node, table.concat(parts[node], '\\n'))
  end
end
`

/**
 * KEYS the descriptor key of each queue ("P:q:{<queue_id>}"; on a cluster the
 * store passes only queues of one slot). The script derives each queue's
 * other keys from it by adding their suffixes: they carry the same hash tag,
 * so they live in the same slot (a fan-out names hundreds of queues, and five
 * key arguments per queue cost the publishing node more than the append
 * itself). ARGV maxEvents, maxBytes, nodeChannelPrefix, variantCount, the
 * variants (event JSON objects without "id", each passed once however many
 * queues get it), then per queue: queueId and the 1-based variant numbers of
 * its events, comma-separated.
 * Each event gets the queue's next ID (HINCRBY of the cursor) and is XADDed to
 * the queue's stream under the entry ID "<id>-1", with the queue's byte total.
 * Returns per queue: the first appended event's ID, -1 when the queue is gone, -2 when it
 * was dropped for exceeding maxEvents or maxBytes. Sends the
 * appended events (or, for a dropped queue, a wake-up) to each node holding or
 * watching the queue, one message per node.
 */
export const APPEND = new WakingScript(`${WAKE}
local max = tonumber(ARGV[1])
local maxBytes = tonumber(ARGV[2])
local variantCount = tonumber(ARGV[4])
local jsons = {}
for v = 1, variantCount do jsons[v] = ARGV[4 + v] end
local out = {}
for i, q in ipairs(KEYS) do
  local a = 3 + variantCount + 2 * i
  local qid = ARGV[a]
  local ttl = redis.call('PTTL', q)
  if ttl < 0 then
    out[i] = -1
  else
    local meta, eventsKey, holderKey, watchersKey = q .. ':m', q .. ':e', q .. ':h', q .. ':w'
    local variants = {}
    local first = -1
    local total = 0
    for v in string.gmatch(ARGV[a + 1], '%d+') do
      v = tonumber(v)
      local id = redis.call('HINCRBY', meta, 'last', 1)
      if first == -1 then first = id end
      total = redis.call('HINCRBY', meta, 'total', #jsons[v])
      redis.call('XADD', eventsKey, id .. '-1', 'e', jsons[v], 'c', total)
      variants[#variants + 1] = v
    end
    local size = redis.call('XLEN', eventsKey)
    -- A new (or emptied) stream takes the queue's TTL; an existing one has it already.
    if size == #variants then redis.call('PEXPIRE', eventsKey, ttl) end
    local bytes = total - tonumber(redis.call('HGET', meta, 'acked') or '0')
    if size > max or bytes > maxBytes then
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

/**
 * Marks a queue's long-poll as held by \`value\` ("<node>|<token>") for \`ttl\` ms;
 * a previous holder is told on its node's channel that it was superseded.
 */
const HOLD = `
local function hold(holderKey, value, ttl, chanPrefix, qid)
  local old = redis.call('GET', holderKey)
  redis.call('SET', holderKey, value, 'PX', ttl)
  if old and old ~= value then
    local node, token = string.match(old, '^([^|]*)|(.*)$')
    if node then publish(chanPrefix .. node, 's ' .. qid .. ' ' .. token) end
  end
end
`

/**
 * The held-poll marks of one turn of the event loop, in one call: first the
 * releases of answered polls (as UNPARK: each mark cleared if that poll still
 * holds it), then ACK and PARK for each poll whose node knows nothing follows
 * its \`upTo\` (a send answers a team's polls together; their releases and
 * their re-polls' parks then come together too).
 * KEYS the descriptor key ("P:q:{<queue_id>}") of each released queue, then of
 * each parking queue (on a cluster the store passes only queues of one slot;
 * their other keys are derived by suffix, as APPEND does). ARGV
 * nodeChannelPrefix, the number of releases, the holder value of each
 * release, then per park six values: ttlMs, slackMs, upTo, queueId, selfNode,
 * holderValue.
 * Per park, in order: prunes up to \`upTo\` (telling the other watchers),
 * refreshes the queue's life unless it was refreshed within \`slackMs\`
 * (its descriptor's PTTL is at least ttlMs - slackMs: most parks of a busy
 * queue follow a refresh by less than the slack, a few seconds, and the life
 * then costs one PTTL instead of eight commands), then marks the poll as
 * held (a previous holder is told it was superseded).
 * Returns two numbers per park: 1 and the queue's life left in ms (the poll
 * is parked); 0, 0 when the queue is gone; -1, 0, changing nothing, when
 * \`upTo\` is no longer between the acknowledged and the last issued ID (the
 * poll must read the queue).
 */
export const PARK_ACK = new WakingScript(`${TELL_PRUNED}${PRUNE}${HOLD}${QUEUE_LIFE}${ACKNOWLEDGE}
local chan = ARGV[1]
local releases = tonumber(ARGV[2])
for i = 1, releases do
  local holderKey = KEYS[i] .. ':h'
  if redis.call('GET', holderKey) == ARGV[2 + i] then redis.call('DEL', holderKey) end
end
local out = {}
for i = releases + 1, #KEYS do
  local q = KEYS[i]
  local a = 3 + releases + 6 * (i - releases - 1)
  local ttl, slack, upTo = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local qid, self, value = ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
  local left = redis.call('PTTL', q)
  if left == -2 then
    out[#out + 1] = 0
    out[#out + 1] = 0
  elseif not acknowledge(q, upTo, self, chan, qid) then
    out[#out + 1] = -1
    out[#out + 1] = 0
  else
    if left < ttl - slack then
      refresh_life(q, ttl)
      left = ttl
    end
    hold(q .. ':h', value, left, chan, qid)
    out[#out + 1] = 1
    out[#out + 1] = left
  end
end
return out
`)

/** KEYS desc, holder; ARGV holderValue, nodeChannelPrefix, queueId. Returns 0 when the queue is gone. */
export const PARK = new WakingScript(`${HOLD}
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
hold(KEYS[2], ARGV[1], ttl, ARGV[2], ARGV[3])
return 1
`)

/**
 * KEYS the holder key of each released poll (on a cluster, of one slot); ARGV the holder value of each.
 * Clears each mark still held by that poll.
 */
export const UNPARK = new LuaScript(`
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then redis.call('DEL', key) end
end
return 1
`)

/**
 * KEYS desc, meta, events, holder, watchers, snapshot, deleted mark (one queue's);
 * ARGV nodeChannelPrefix, queueId, how long the mark lives (ms; 0: no mark, the
 * queue is dropped rather than deleted).
 * Returns 1 when the queue existed; then marks it deleted and wakes its holder
 * and watchers so they see it gone (a held poll of a deleted queue finishes
 * with no events; of a dropped one, with BAD_EVENT_QUEUE_ID).
 * (The store then removes the queue from its index sets, which live in other slots.)
 */
export const REMOVE = new WakingScript(`${WAKE}
local existed = redis.call('DEL', KEYS[1])
if existed == 1 then
  if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[7], '1', 'PX', ARGV[3]) end
  wake_readers(KEYS[4], KEYS[5], ARGV[2])
end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
send_wakes(ARGV[1])
return existed
`)
