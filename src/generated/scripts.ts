// DO NOT EDIT: generated from lua/ by tools/build-lua.ts (npm run build:lua).
// Each script is flattened (its includes written in once) and hashed here, so every runtime
// loads byte-identical source with the same sha1.

/** One flattened Lua script: its name, sha1 and source. */
export interface ScriptSource {
  /** The script's name: its file in lua/ without `.lua`. */
  readonly name: string;
  /** The sha1 of `lua`, for EVALSHA. */
  readonly sha1: string;
  /** The source with its includes flattened in, as EVAL sends it. */
  readonly lua: string;
}

export const scripts = {
  beat: {
    name: "beat",
    sha1: "ff33a2e7617ea424e5d13feb1aa96c5d52581149",
    lua: `--[[
  beat: one step of a consumer's loop in one call: reap expired leases, promote due jobs, then
  claim up to n. An idle beat is this one script. Promoting also readmits the throttled entries
  that may start again (includes/readmit_due.lua).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  reapLimit (>= 0): the most expired leases to reap
  ARGV[3]  promoteLimit (>= 0): the most due jobs to promote
  ARGV[4]  n (>= 0): the most jobs to claim
  ARGV[5]  leaseMs (>= 1)
  ARGV[6]  request key of the claim ("" = none; see claim.lua): a repeat reaps and promotes what
           is due again (harmless) and answers the first claim's jobs
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>,
           emq:{q}:minutes (a lease reaped out of attempts: includes/bury.lua)
  Reply    as claim's, with promoted, requeued and buried counts and the due schedulers in the
           head: { {now, paused, next due, next lease deadline, promoted, requeued, buried,
           {due schedulers}, {flow news}}, job, ... }; unlike claim's, the next due time and lease deadline
           are there even when n jobs were claimed (-1 for none), so a busy consumer can arm its
           timers. The due schedulers (at most 100, includes/due_schedulers.lua) are for the
           caller to fire (fire-schedulers.lua) once it has worked out their next slots; the
           flow news (outbox entries, includes/outbox_append.lua) for it to relay to their
           parents' queues (flow-apply.lua) and acknowledge (flow-ack.lua). The outbox, the
           schedulers and the throttled entries are read only on a queue that ever had them
           (meta \`fl\`, \`sc\`, \`th\`: includes/queue_meta.lua)
  Events   as reap's, then promote's, then claim's, in one entry
  Counts   as reap's: meta \`stalled\` += the jobs reaped
  Errors   EMQARG (a malformed number)
  Rings    the doorbell when reaping, promotion or a readmitted entry made work claimable (other consumers may be
           parked); empties both bells when fewer than n jobs were claimed, as claim does
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- Count \`g\` once in \`tally\`, {order = {groups in first-seen order}, [g] = count}: settling a
-- batch frees each group's slots in one step (free_slots) instead of one per job.
local function tally(t, g)
  if not g or g == '' then return end
  if not t[g] then
    t[g] = 0
    t.order[#t.order + 1] = g
  end
  t[g] = t[g] + 1
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- The queue's retention of dead jobs (meta \`dage\`: the most ms a dead job is kept, \`dmax\`: the
-- most dead jobs kept; set-dead-retention writes them), applied after a burial at \`now\`: at most
-- two of the oldest dead jobs past it are deleted, row and all. Two, not all: a burial does a
-- bounded amount of work, and a backlog (a retention just set or lowered) still shrinks by one
-- a burial; clean('dead') removes it at once. A queue without a retention pays one HMGET. A row
-- deleted releases its ttl dedupe key, as any removal does (an until-finished one went at death),
-- and a flow parent's unfinished children are removed (forget_flow), as removing it would.
local function trim_dead(now)
  local r = redis.call('HMGET', K_META, 'dage', 'dmax', 'fl')
  if not r[1] and not r[2] then return end
  local victims, seen = {}, {}
  local function add(ids)
    for _, id in ipairs(ids) do
      if not seen[id] and #victims < 2 then
        seen[id] = true
        victims[#victims + 1] = id
      end
    end
  end
  if r[1] then
    add(redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', string.format('%d', now - tonumber(r[1])), 'LIMIT', 0, 2))
  end
  if r[2] and #victims < 2 then
    local excess = redis.call('ZCARD', K_DEAD) - tonumber(r[2])
    if excess > 0 then add(redis.call('ZRANGE', K_DEAD, 0, math.min(excess, 2) - 1)) end
  end
  if #victims == 0 then return end
  for _, id in ipairs(victims) do
    if r[3] then
      local row = redis.call('HMGET', job_key(id), 'dk', 'fw')
      release_dedupe(id, row[1])
      if row[2] then forget_flow(id, 'dead', nil, row[2], nil, now) end
    else
      release_dedupe(id, redis.call('HGET', job_key(id), 'dk'))
    end
    redis.call('DEL', job_key(id))
  end
  redis.call('ZREM', K_DEAD, unpack(victims))
end
-- A job that held deduplication key \`k\` (its row's \`dk\`; nil or false: none) in until-finished
-- mode (no \`dt\`, the row's ttl) has finished: completed or dead. The key is released, so the next
-- enqueue with it adds a job; \`forget\` (a dead job's row stays) also takes \`dk\` off the row, so a
-- reprocessed job does not claim a key it no longer holds. A ttl key is left to expire.
local function release_settled(id, k, ttl, forget)
  if not k or ttl then return end
  release_dedupe(id, k)
  if forget then redis.call('HDEL', job_key(id), 'dk') end
end
-- Count \`n\` (>= 1) jobs of kind \`kind\` ('c' completed, 'd' sent to dead) in the minute of \`now\`
-- (the script's server ms) in K_MINUTES, field \`<kind><minute>\`, minute = floor(now / 60000):
-- the per-minute buckets of the last hour counts.lua reads (docs/design.md, "Keyspace"). One
-- HINCRBY a call; only the first write of its kind in a minute (HINCRBY answers n: the field was
-- new) also drops the fields more than 60 minutes older than this one (HKEYS over at most 122
-- fields, one HDEL) and sets the key to expire 61 minutes after this minute starts, a minute after
-- its newest field has left every reader's hour: so a queue gone idle leaves no key behind. At
-- most three commands more per kind and minute: amortised, one command a call.
local function count_minute(kind, n, now)
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', K_MINUTES, kind .. string.format('%d', minute), n) ~= n then return end
  local oldest, old = minute - 60, {}
  for _, field in ipairs(redis.call('HKEYS', K_MINUTES)) do
    local m = tonumber(string.sub(field, 2))
    if not m or m < oldest then old[#old + 1] = field end
  end
  if #old > 0 then redis.call('HDEL', K_MINUTES, unpack(old)) end
  redis.call('PEXPIREAT', K_MINUTES, string.format('%d', (minute + 61) * 60000))
end
-- Move job \`id\`, already out of every other set, to dead with its last error; count it in
-- meta.buried (dead jobs ever, for metrics: the dead set shrinks on reprocess and remove) and in
-- its minute's bucket (count_minute: every way to dead comes through here, the reaper's too), then
-- apply the queue's retention of dead jobs (trim_dead), which may delete this very row when the
-- retention keeps none.
-- \`mark\`: the \`t\` the settle that buries it leaves (settled_token), nil for the reaper, which
-- leaves the claim's bare token so the holder it took the lease from stays fenced off.
-- \`dk\`, \`dt\`: the row's dedupe key and its ttl (false or nil: none): an until-finished key is
-- released and leaves the row (release_settled), so a reprocess does not take it again.
-- \`fp\`, \`token\`: a flow child's parent (its row's \`fp\`; nil for none) and the lease token of the
-- run that died (nil: none), for the news its parent gets through the outbox (report_up).
local function bury(id, err, now, mark, dk, dt, fp, token)
  release_settled(id, dk, dt, true)
  if fp then report_up(id, fp, token, 'd', err, now) end
  redis.call('ZADD', K_DEAD, now, id)
  redis.call('HINCRBY', K_META, 'buried', 1)
  count_minute('d', 1, now)
  if mark then
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now, 't', mark)
  else
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now)
  end
  trim_dead(now)
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- The entries of \`entries\` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- The tail every settle shares: free the group slots counted in \`freed\` (tally), then admit the
-- jobs collected in \`batch\` (batch_push; nil when nothing goes back to a lane). Slots first: a
-- lane that gets its job back and a freed slot goes on the ring once. Returns true when either
-- made work claimable; the caller rings the doorbell, once (beat rings once for its reaping and
-- its promotion together, so this does not ring itself).
local function free_and_admit(freed, batch)
  local woke = free_slots(freed)
  if batch and admit(batch) then woke = true end
  return woke
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- Up to \`limit\` jobs whose lease ended by \`now\` leave the active set: back to their lane (or
-- pending) with their original order, or dead once their attempts are used up; their group
-- slots are freed. Returns requeued, buried, and whether work became claimable. The row keeps the
-- claim's bare token in \`t\` (no settle's mark, includes/settled_token.lua), so a late settle by
-- the holder it took the lease from is fenced off, never taken for a repeat of a settle that ran.
-- Collects a \`stalled\` event (j, g, a) per job, followed by its \`dead\` (x 'lease expired') when that
-- was its last attempt: the caller flushes. Adds the jobs reaped to meta \`stalled\` (the counter
-- /metrics shows), once a call. A job buried releases its until-finished dedupe key (bury).
local function reap_expired(now, limit)
  local ids = redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', now, 'LIMIT', 0, limit)
  if #ids == 0 then return 0, 0, false end
  chunked('ZREM', K_ACTIVE, ids)
  local requeued, buried, freed = 0, 0, { order = {} }
  local batch = { order = {} }
  for _, id in ipairs(ids) do
    local r = redis.call('HMGET', job_key(id), 'a', 'g', 'm', 'z', 'o', 'dk', 'dt', 'fp', 't')
    if r[1] then
      tally(freed, r[2])
      local attempt = tonumber(r[1]) - (tonumber(r[4]) or 0)
      collect_event('stalled', id, 'g', r[2], 'a', attempt)
      if attempt >= (tonumber(r[3]) or DEFAULT_MAX_ATTEMPTS) then
        bury(id, 'lease expired', now, nil, r[6], r[7], r[8], r[9])
        collect_event('dead', id, 'g', r[2], 'a', attempt, 'x', 'lease expired')
        buried = buried + 1
      else
        redis.call('HSET', job_key(id), 's', 'pending')
        batch_push(batch, r[2], r[5], id)
        requeued = requeued + 1
      end
    end
  end
  if requeued + buried > 0 then redis.call('HINCRBY', K_META, 'stalled', requeued + buried) end
  return requeued, buried, free_and_admit(freed, batch)
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- Rewrite step \`index\` of job \`id\` (its record, JSON: n name, k kind, s state, r result as JSON
-- text, e error, a attempts, st and ft started and finished ms, u until ms, ev event, ei the
-- event's id, cq and ci an invoked child) with \`fields\` set on it (a value false deletes the
-- field). Returns the record as written, nil when the job has no such step. Only the records a
-- suspension or its end rewrite come through here (a sleep's, a wait's, an invoke's): a run
-- step's result is written whole by step.lua, never decoded by a script.
local function step_update(id, index, fields)
  local key = step_key(id)
  local text = redis.call('HGET', key, index)
  if not text then return nil end
  local record = cjson.decode(text)
  for f, v in pairs(fields) do
    if v == false then record[f] = nil else record[f] = v end
  end
  redis.call('HSET', key, index, cjson.encode(record))
  return record
end
-- A suspended job goes back to be claimed (docs/design/steps.md): the step it waited on (its
-- row's \`sw\`, kind letter then index) is rewritten with \`fields\`, the row leaves its suspension
-- (\`sw\`, and \`wk\` the waiters zset of a wait, whose member it stops being), and it joins its lane
-- in its place (\`batch\`, admitted by the caller). \`row\` is {group or false, order} as read.
-- Collects a \`step\` event (j, g, n the step's name, s its new state).
local function resume_step(id, sw, wk, row, fields, batch)
  local key = job_key(id)
  local record = step_update(id, string.sub(sw, 2), fields)
  if wk then
    redis.call('ZREM', wk, id)
    redis.call('ZREM', PREFIX .. 'awaiting', id)
    redis.call('HDEL', key, 'sw', 'wk')
  else
    redis.call('HDEL', key, 'sw')
  end
  redis.call('HSET', key, 's', 'pending')
  batch_push(batch, row[1], row[2], id)
  collect_event('step', id, 'g', row[1], 'n', record and record.n, 's', record and record.s)
end
-- Up to \`limit\` waits for events whose timeout has passed by \`now\` end (docs/design/steps.md):
-- each one's step records \`timedout\` (its handler's waitForEvent resolves null) and its job goes
-- back to be claimed. Read only in a queue where a step was ever written (meta \`st\`). Returns
-- how many timed out; the jobs join \`batch\` for the caller to admit.
local function time_out_waits(now, limit, batch)
  local due = redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', now, 'LIMIT', 0, limit)
  for _, id in ipairs(due) do
    local r = redis.call('HMGET', job_key(id), 'sw', 'wk', 'g', 'o')
    if r[1] then
      resume_step(id, r[1], r[2], { r[3], r[4] }, { s = 'timedout', ft = now }, batch)
    else
      redis.call('ZREM', PREFIX .. 'awaiting', id)
    end
  end
  return #due
end
-- Up to \`limit\` scheduled jobs due by \`now\` move to their lane (or pending), earliest first.
-- Returns how many moved, the next due time still scheduled (-1 when none), and whether work
-- became claimable. A row keeps its \`t\`: a retry sent again after its job was promoted still
-- answers scheduled, as it did (includes/settled_token.lua). Collects a \`promoted\` event (j, g) per
-- job, earliest first: the caller flushes. In a queue with durable steps (meta \`st\`), a sleeper's
-- step records \`done\` as it moves (docs/design/steps.md), it leaves the sleepers' index, and the
-- waits for events whose timeout passed end too (includes/time_out_waits.lua), up to \`limit\` more.
local function promote_due(now, limit)
  local due = redis.call('ZRANGEBYSCORE', K_SCHEDULED, '-inf', now, 'LIMIT', 0, limit)
  local woke = false
  local steps = queue_meta().st
  local batch = { order = {} }
  if #due > 0 then
    chunked('ZREM', K_SCHEDULED, due)
    if steps then chunked('ZREM', PREFIX .. 'sleeping', due) end
    for _, id in ipairs(due) do
      local key = job_key(id)
      local r
      if steps then
        r = redis.call('HMGET', key, 'g', 'o', 'sw')
        if r[3] and string.sub(r[3], 1, 1) == 's' then
          local record = step_update(id, string.sub(r[3], 2), { s = 'done', ft = now })
          redis.call('HDEL', key, 'sw')
          collect_event('step', id, 'g', r[1], 'n', record and record.n, 's', 'done')
        end
      else
        r = redis.call('HMGET', key, 'g', 'o')
      end
      redis.call('HSET', key, 's', 'pending')
      batch_push(batch, r[1], r[2], id)
      collect_event('promoted', id, 'g', r[1])
    end
  end
  local timed_out = steps and time_out_waits(now, limit, batch) or 0
  if #due > 0 or timed_out > 0 then woke = admit(batch) end
  return #due + timed_out, first_score(K_SCHEDULED), woke
end
-- The stored rate limit of \`entry\` ("limit:periodMs"): QUEUE_ENTRY's in meta \`rate\`, a group's in
-- K_GRATE; false when it has none (ungrouped work has none of its own).
local function rate_spec(entry)
  if entry == QUEUE_ENTRY then return redis.call('HGET', K_META, 'rate') end
  if entry == UNGROUPED then return false end
  return redis.call('HGET', K_GRATE, entry)
end
-- A stored rate limit, "limit:periodMs", as two numbers; nil for none (nil or false) or anything else.
local function parse_rate(spec)
  local limit, period = string.match(spec or '', '^(%d+):(%d+)$')
  if not limit then return nil end
  return tonumber(limit), tonumber(period)
end
-- The rate limit of \`entry\` (QUEUE_ENTRY for the queue's own): limit and period in ms, or nil
-- when it has none.
local function rate_of(entry)
  return parse_rate(rate_spec(entry))
end
-- The log of \`entry\`'s recent job starts (a zset: member a lease token, score the start's server
-- ms): emq:{q}:starts for the queue's own rate limit, emq:{q}:starts:<g> for group g's.
local function starts_key(entry)
  if entry == QUEUE_ENTRY then return PREFIX .. 'starts' end
  return PREFIX .. 'starts:' .. entry
end
-- How many jobs \`entry\` started within the window of \`period\` ms that ends now: its starts log
-- trimmed to the starts after now - period (a start at s counts until s + period), then counted.
local function rate_used(entry, period, now)
  local key = starts_key(entry)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - period))
  return redis.call('ZCARD', key)
end
-- When \`entry\` may start one more job under its rate limit (\`limit\` starts per \`period\` ms): now
-- when fewer than \`limit\` starts are in the window, else the time enough of them leave it that
-- one more fits (the (used - limit + 1)th oldest start plus the period).
local function rate_due(entry, limit, period, now)
  local used = rate_used(entry, period, now)
  if used < limit then return now end
  local at = redis.call('ZRANGE', starts_key(entry), used - limit, used - limit, 'WITHSCORES')[2]
  return tonumber(at) + period
end
-- When ring entry \`entry\` (or QUEUE_ENTRY) may start a job again, as far as its hold and its rate
-- limit say (its pause, concurrency limit and lane aside): a time <= now means it may now.
local function closed_until(entry, now)
  local at = tonumber(redis.call('HGET', K_HOLDS, entry)) or 0
  local limit, period = rate_of(entry)
  if limit then
    local due = rate_due(entry, limit, period, now)
    if due > at then at = due end
  end
  return at
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- A throttled entry whose hold and rate limit let it start again: out of K_THROTTLED (its hold,
-- over, forgotten), and a ring entry back on the ring when its lane is serviceable. Returns true
-- when work became claimable (for QUEUE_ENTRY: the ring has entries); the caller rings the doorbell.
local function reopen(entry)
  redis.call('ZREM', K_THROTTLED, entry)
  redis.call('HDEL', K_HOLDS, entry)
  if entry == QUEUE_ENTRY then return redis.call('LLEN', K_RING) > 0 end
  if lane_serviceable(entry) then
    redis.call('RPUSH', K_RING, entry)
    return true
  end
  return false
end
-- Throttled entries due by \`now\` (at most \`limit\`, earliest first) start again when their hold and
-- rate limit let them (reopen), or wait on at the time they now may (a hold lengthened, a limit
-- lowered meanwhile). Returns true when work became claimable; the caller rings the doorbell.
-- Nothing is read on a queue that never throttled an entry (meta \`th\`).
local function readmit_due(now, limit)
  if not queue_meta().th then return false end
  local due = redis.call('ZRANGEBYSCORE', K_THROTTLED, '-inf', string.format('%d', now), 'LIMIT', 0, limit)
  local woke = false
  for _, entry in ipairs(due) do
    local at = closed_until(entry, now)
    if at > now then
      redis.call('ZADD', K_THROTTLED, string.format('%d', at), entry)
    elseif reopen(entry) then
      woke = true
    end
  end
  return woke
end
-- A lane's one order over its two parts, from their heads as read: \`z\`, a zset's ZRANGE WITHSCORES
-- (id, score, ...), and \`f\`, its arrivals list's LRANGE, whose members' orders are their rows' \`o\`;
-- the lower order goes first. Takes up to \`count\` ids from both in that order, and returns them,
-- their orders (nil where it is the row's \`o\`: a list member's), and how many of each part it
-- took. pop_lane pops what it took; lane_range pages through it. A row read only for a mix of
-- both parts.
local function merge_lane(z, f, count)
  local ids, orders = {}, {}
  local zi, fi, f_order = 1, 1, nil
  while #ids < count and (zi <= #z or fi <= #f) do
    if fi <= #f and not f_order then f_order = tonumber(redis.call('HGET', job_key(f[fi]), 'o')) or 0 end
    if zi <= #z and (fi > #f or tonumber(z[zi + 1]) < f_order) then
      ids[#ids + 1] = z[zi]
      orders[#ids] = z[zi + 1]
      zi = zi + 2
    else
      ids[#ids + 1] = f[fi]
      fi = fi + 1
      f_order = nil
    end
  end
  return ids, orders, (zi - 1) / 2, fi - 1
end
-- Take the \`count\` first jobs of ring entry g, whose zset holds \`zn\` and arrivals list \`fn\`
-- (count <= zn + fn; either is nil when the caller has not read it: then the zset's size is read
-- if need be, and the list's only if the zset holds any, and fewer than count may come back).
-- The lane's order is one order over both: each list member's order is its row's \`o\`, each zset
-- member's its score; the lower goes first. Returns the ids in that order and their orders; an
-- order is nil where it is the row's \`o\` (a list member), so only a mix of both parts reads rows
-- here; the orders are nil altogether when every job came from the arrivals list.
local function pop_lane(g, count, zn, fn)
  if not zn then zn = redis.call('ZCARD', lane_key(g)) end
  -- the count as text: a Lua number is formatted for Redis on every call it is passed to; from
  -- the arrivals list alone every order is its row's, so there are no orders to hand back
  if zn == 0 then return redis.call('LPOP', fifo_key(g), string.format('%d', count)) or {}, nil end
  local ids, orders = {}, {}
  if not fn then
    fn = redis.call('LLEN', fifo_key(g))
    count = math.min(count, zn + fn)
  end
  if fn == 0 then
    local popped = redis.call('ZPOPMIN', lane_key(g), string.format('%d', count))
    for p = 1, #popped, 2 do
      ids[#ids + 1] = popped[p]
      orders[#ids] = popped[p + 1]
    end
    return ids, orders
  end
  local z = redis.call('ZRANGE', lane_key(g), 0, count - 1, 'WITHSCORES')
  local f = redis.call('LRANGE', fifo_key(g), 0, count - 1)
  local zk, fk
  ids, orders, zk, fk = merge_lane(z, f, count)
  if zk > 0 then redis.call('ZPOPMIN', lane_key(g), zk) end
  if fk > 0 then redis.call('LPOP', fifo_key(g), fk) end
  return ids, orders
end
-- Record in \`entry\`'s starts log that the jobs with lease tokens \`tokens\` (numbers) started at
-- \`now\`; the log expires a period after its newest start, when none of it counts any more.
local function log_starts(entry, tokens, period, now)
  if #tokens == 0 then return end
  local key, at, args = starts_key(entry), string.format('%d', now), {}
  for _, t in ipairs(tokens) do
    args[#args + 1] = at
    args[#args + 1] = string.format('%d', t)
  end
  chunked('ZADD', key, args)
  redis.call('PEXPIRE', key, string.format('%d', period))
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- The earliest next slot of any scheduler (ms), or -1 when none will fire: a scheduler that fires
-- no more waits in \`schedulers\` with the score +inf, which Redis answers as "inf". A queue that
-- never made a scheduler (meta \`sc\` unset) has none: nothing is read.
local function first_slot()
  if not queue_meta().sc then return -1 end
  local score = redis.call('ZRANGE', K_SCHEDULERS, 0, 0, 'WITHSCORES')[2]
  if score == nil or score == 'inf' then return -1 end
  return tonumber(score)
end
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then. The throttled entries are read only once
-- any was (meta \`th\`), the waits' timeouts once a step was (meta \`st\`).
-- The earliest timeout of a wait for an event (a wait without one scores +inf): -1 for none.
local function first_timeout()
  local at = tonumber(redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  return at or -1
end
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), queue_meta().th and first_score(K_THROTTLED) or -1,
    queue_meta().st and first_timeout() or -1 }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- The schedule bell for a time \`at\` (ms) that was just written (a scheduler's next slot): when it
-- is now the next due time of the queue, push a token onto \`sched\` so a parked consumer re-reads
-- the next due time and sets its timer (a slot already due runs a beat at once).
local function ring_sched_bell_at(at)
  if at >= 0 and next_due() == at then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
-- Throttle \`entry\` (a ring entry, or QUEUE_ENTRY) until \`at\` (ms): into K_THROTTLED at that score,
-- or at its later one if it is there already (a throttled entry is off the ring; the caller takes
-- it off). \`at\` is a due time the scripts know (includes/next_due.lua): when it is the queue's
-- next one the schedule bell rings, so parked consumers set their timers for it. The queue's
-- first throttle sets meta \`th\`, under which the scripts read \`throttled\` at all.
local function throttle(entry, at)
  mark_feature('th')
  redis.call('ZADD', K_THROTTLED, 'GT', string.format('%d', at), entry)
  ring_sched_bell_at(at)
end
-- The active zset kept in Redis's skiplist encoding. Redis keeps a zset of at most 128 members
-- (zset-max-listpack-entries) as a listpack, where each ZADD or ZREM of a member walks the whole
-- list: a drain that claims and completes 100 jobs a call into a zset of about 100 spent some
-- 24k of its 137k instructions a job there (callgrind; 6k as a skiplist). A member longer than
-- 64 bytes (zset-max-listpack-value) makes the zset a skiplist and keeps it one, so a claim of
-- ACTIVE_SKIPLIST_BATCH jobs or more adds this member, first in its ZADD (a new zset's encoding
-- follows the first member), scored +inf: no lease ever ends there, so the reads by deadline
-- (reap's expired range) never see it, and the reads of the leases go up to, not including, +inf
-- (first_lease, lease_count, the listings). It is not a job id (ids are "JOB:..."); the keyspace
-- checker allows it and nothing else that is not a leased job (docs/design/keyspace.md).
local ACTIVE_SKIPLIST_MEMBER = '~ keeps this zset a skiplist: a listpack zset walks all its members on each ZADD and ZREM ~'
local ACTIVE_SKIPLIST_BATCH = 32
-- The earliest lease deadline (ms), -1 for none.
local function first_lease()
  return tonumber(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]) or -1
end
-- How many jobs are leased.
local function lease_count()
  return redis.call('ZCOUNT', K_ACTIVE, '-inf', '(+inf')
end
-- The leased jobs from the \`offset\`th soonest deadline on, at most \`limit\` (ids and deadlines,
-- flat, as ZRANGE WITHSCORES answers; ids only without \`scores\`).
local function lease_range(offset, limit, scores)
  if scores then
    return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', offset, limit)
  end
  return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'LIMIT', offset, limit)
end
-- A claimed job as a claim's reply carries it: one string, its fields joined by single spaces and
-- the payload last, "<id> <token> <group> <attempt of this run> <max attempts> <created> <traceparent>
-- <parent> <timeout> <payload>" ('' for a field it lacks: no group, no traceparent, not a flow child), or, for
-- a flow parent or a job with durable steps, { that string, its children hash flat (\`kids\`, false
-- for none: 0 in the reply), its steps hash flat (\`steps\`, absent for none: docs/design/steps.md) }. No field but the
-- payload can hold a space: ids, group and queue names and traceparents are checked for their
-- characters before they are written (src/encode.ts, src/keyspace.ts), and the payload, which
-- may, comes last (src/ops/claim.ts reads it). One string where a table of ten was: Redis writes,
-- and the client reads, one reply element a job instead of eleven.
-- \`token\` and \`attempt\` are text or numbers (a Lua number below 2^53 concatenates in full), the
-- rest text as the row holds it (\`max_attempts\` nil for the default, \`created\` its \`c\`).
local function claimed_job(id, token, group, attempt, max_attempts, created, traceparent, parent, payload, kids, steps, timeout)
  local wire = id .. ' ' .. token .. ' ' .. group .. ' ' .. attempt .. ' ' .. (max_attempts or DEFAULT_MAX_ATTEMPTS)
    .. ' ' .. (created or '') .. ' ' .. (traceparent or '') .. ' ' .. (parent or '') .. ' ' .. (timeout or '') .. ' ' .. payload
  if steps then return { wire, kids or 0, steps } end
  if kids then return { wire, kids } end
  return wire
end
-- Turn hash \`key\` into Redis's hashtable encoding for good: a field written with a value longer
-- than hash-max-listpack-value (64 by default) converts it, and deleting that field does not
-- convert it back (Redis never packs a hash again while it exists), so nothing stays behind for
-- any reader to skip. Redis keeps a hash of up to 128 fields as a listpack, one packed list that
-- every HGET, HMGET field and HSET walks: the groups' limits and active counts of a queue of 100
-- groups, read and written a field per group at every claim and settle, cost a grouped drain 11%
-- of its instructions that way (bench:instructions drain-groups). On a server that packs nothing
-- the two commands change nothing. The field \`~\` is no group name (src/keyspace.ts NAME).
-- Callers convert a hash once it holds HASH_AS_TABLE_FIELDS fields or more: below that a walk of
-- the packed list costs about what a hashtable's lookup does, and a queue of a few groups keeps
-- its small hashes small.
local HASH_AS_TABLE_FIELDS = 16
local HASH_AS_TABLE_VALUE = '~ a value over 64 bytes: writing it makes this hash a hashtable for good ~'
local function hash_as_table(key)
  redis.call('HSET', key, '~', HASH_AS_TABLE_VALUE)
  redis.call('HDEL', key, '~')
end
-- Claim up to n jobs under a lease of lease_ms from the server time \`now\`, as n turns of the
-- ring: each turn takes the head entry's next job and sends the entry to the back while it is
-- still serviceable, so one busy group cannot starve the others and ungrouped work (the entry
-- UNGROUPED) takes its own turn. A limited group never goes past its limit. The turns are
-- simulated in memory over at most n entries read at once, then the ring is rewritten in two
-- commands (none when its order is unchanged), so a batch costs a few commands per entry instead
-- of per turn.
-- Rate limits (docs/design.md, "Rate limits and holds"): the queue's caps the jobs of the whole
-- claim, a group's its entry's share, at the limit less the starts in the window before now; an
-- entry (or the queue) this claim takes to its limit is throttled until it may start one more, so
-- it is off the ring (and the queue's claims hand out nothing) until a beat readmits it.
-- Each claim increments the row's attempts and takes a lease token from the queue-wide counter
-- meta.fence, written to the row's \`t\`: unique across every life of an id (a removed id enqueued
-- again starts its attempts from 0, but never its tokens), so a stale holder is always fenced.
-- The bare token replaces the mark a settle left there (includes/settled_token.lua): from this
-- claim on, a settle of an earlier lease sent again is fenced off too.
-- The claim also writes the job's order into the row's \`o\` (a job waiting in a zset has it only as
-- its score): a job out of its lane needs it to go back in its place (retry, reap, release,
-- reprocess). The lane's zset and arrivals list are popped as one order (includes/pop_lane.lua).
-- Returns the jobs as a claim's reply carries them (includes/claimed_job.lua) in turn order (what
-- n single claims would hand out, one by one), whether the queue is paused, and the ids and
-- tokens handed out (flat: id, token as text, ...), for a request's record (claim_reply).
-- Collects an \`active\` event (j, g, a) per job in turn order: the caller flushes.
local function claim_jobs(n, lease_ms, now)
  local jobs, held = {}, {}
  -- paused, the queue's rate limit ("limit:periodMs") and how many groups have one: the call's one read of meta
  local meta = queue_meta()
  if meta.paused then return jobs, true, held end
  if n <= 0 then return jobs, false, held end
  local q_limit, q_period, q_used
  q_limit, q_period = parse_rate(meta.rate)
  if q_limit then
    q_used = rate_used(QUEUE_ENTRY, q_period, now)
    if q_used >= q_limit then
      throttle(QUEUE_ENTRY, rate_due(QUEUE_ENTRY, q_limit, q_period, now))
      return jobs, false, held
    end
    n = math.min(n, q_limit - q_used)
  end
  -- one entry more than needed tells whether the fetched entries are the whole ring: a whole ring
  -- whose order the turns leave as it was needs no rewrite (a lone entry claimed one at a time)
  local entries = redis.call('LRANGE', K_RING, 0, n)
  local whole = #entries <= n
  if not whole then entries[#entries] = nil end
  local k = #entries
  if k == 0 then return jobs, false, held end

  local limits, actives, named = {}, {}, {}
  for _, g in ipairs(entries) do
    if g ~= UNGROUPED then named[#named + 1] = g end
  end
  if #named > 0 then
    local l = chunked('HMGET', K_GLIMIT, named)
    local a = chunked('HMGET', K_GACTIVE, named)
    for i, g in ipairs(named) do
      limits[g] = tonumber(l[i])
      actives[g] = tonumber(a[i]) or 0
    end
  end
  -- the groups' rate limits, read only when some group has one: each one's headroom is its limit
  -- less its starts in the window (rates[g] = {limit, period, used})
  local rates = {}
  if #named > 0 and tonumber(meta.grates or '0') > 0 then
    local specs = chunked('HMGET', K_GRATE, named)
    for i, g in ipairs(named) do
      local limit, period = parse_rate(specs[i])
      if limit then
        rates[g] = { limit, period, rate_used(g, period, now) }
      end
    end
  end
  -- whether no entry's zset holds a job (most jobs wait in arrivals lists): one EXISTS for all
  -- (a zset with no member does not exist) spares each entry its zset's size
  local zsets = {}
  for i, g in ipairs(entries) do zsets[i] = lane_key(g) end
  local no_zsets = count_existing(zsets) == 0
  -- what each entry can hand out: its lane's size, within its group's headroom. An entry on the
  -- ring has work and is open (the ring's invariant), so with a headroom of one it hands out one
  -- job, and its arrivals list's length is left for pop_lane to read as it needs it
  local avail, take, queue, zsize, fsize = {}, {}, {}, {}, {}
  for i, g in ipairs(entries) do
    local room = limits[g] and limits[g] - actives[g]
    local rate = rates[g]
    if rate and (not room or rate[1] - rate[3] < room) then room = rate[1] - rate[3] end
    local c
    if no_zsets then zsize[i] = 0 end
    if room and room <= 1 then
      c = math.max(room, 0)
    else
      zsize[i] = zsize[i] or redis.call('ZCARD', lane_key(g))
      fsize[i] = redis.call('LLEN', fifo_key(g))
      c = zsize[i] + fsize[i]
      if room then c = math.min(c, room) end
    end
    avail[i], take[i], queue[i] = c, 0, i
  end

  -- the turns: a whole ring (fewer entries than n) goes round again; a longer one gets one pass
  local head, tail, total = 1, k, 0
  local turns = {} -- the entry of each turn, in turn order: the order the jobs are handed out
  while total < n and head <= tail and (whole or head <= k) do
    local i = queue[head]
    head = head + 1
    if avail[i] > take[i] then
      take[i] = take[i] + 1
      total = total + 1
      turns[total] = i
      if avail[i] > take[i] then
        tail = tail + 1
        queue[tail] = i
      end
    end
  end

  -- the ring afterwards: the fetched prefix replaced by what is still serviceable, in turn order
  local rest, seen, changed = {}, {}, not whole
  for j = head, tail do
    local g = entries[queue[j]]
    if not seen[g] then
      seen[g] = true
      rest[#rest + 1] = g
    end
  end
  if whole and #rest == k then
    for i = 1, k do
      if rest[i] ~= entries[i] then changed = true end
    end
  else
    changed = true
  end
  if changed then
    redis.call('LTRIM', K_RING, k, -1)
    chunked('RPUSH', K_RING, rest)
  end

  -- the fields of each claimed row: a flow's, the steps' and a job's own timeout only in a queue
  -- that ever had them (includes/queue_meta.lua)
  local row_fields = { 'd', 'a', 'm', 'z', 'c', 'x' }
  if meta.fl or meta.st then row_fields[7], row_fields[8] = 'fp', 'fw' end
  if meta.st then row_fields[#row_fields + 1], row_fields[#row_fields + 2] = 'sn', 'sw' end
  if meta.tm then row_fields[#row_fields + 1] = 'to' end
  -- where each optional field is in a row's reply (nil: not asked for, so r[nil] is nil)
  local at = {}
  for i = 7, #row_fields do at[row_fields[i]] = i end
  -- the deadline as text once: a Lua number is formatted for Redis on every call it is passed to
  local deadline = string.format('%d', now + lease_ms)
  -- a big claim keeps the active zset a skiplist (includes/active_skiplist.lua)
  local leases = total >= ACTIVE_SKIPLIST_BATCH and { '+inf', ACTIVE_SKIPLIST_MEMBER } or {}
  local token = 0
  if total > 0 then token = redis.call('HINCRBY', K_META, 'fence', total) - total end
  -- the jobs as the reply carries them, their ids and this run's attempts, entry by entry in pop
  -- order: an entry's are \`made_count[i]\` of them from \`made_first[i]\` on (flat arrays, not three
  -- tables an entry: a grouped claim takes one job from each of dozens of entries)
  local made, made_ids, made_runs, made_first, made_count = {}, {}, {}, {}, {}
  -- the groups' new active counts, written in one HSET (their old ones were read above)
  local counts = {}
  -- the tokens handed out, for the queue's starts log when it has a rate limit
  local started = {}
  for i, g in ipairs(entries) do
    local rate = rates[g]
    -- the tokens handed out for this entry, for its starts log: only an entry with a rate limit keeps one
    local tokens = rate and {} or nil
    if take[i] > 0 then
      local ids, orders = pop_lane(g, take[i], zsize[i], fsize[i])
      made_first[i], made_count[i] = #made + 1, #ids
      local group = g ~= UNGROUPED and g or ''
      if g ~= UNGROUPED and #ids > 0 then
        counts[#counts + 1] = g
        counts[#counts + 1] = string.format('%d', actives[g] + #ids)
      end
      for p, id in ipairs(ids) do
        local key = job_key(id)
        -- a flow's fields only in a queue that ever had a flow job (includes/queue_meta.lua)
        local r = redis.call('HMGET', key, unpack(row_fields))
        local attempts = (tonumber(r[2]) or 0) + 1
        token = token + 1
        if tokens then tokens[#tokens + 1] = token end
        if q_limit then started[#started + 1] = token end
        -- the numbers as text (see the deadline above); a job from the arrivals list has its order
        -- in its row already (orders[p] is nil)
        local a_text, t_text = string.format('%d', attempts), string.format('%d', token)
        local order = orders and orders[p]
        if order then
          redis.call('HSET', key, 's', 'active', 'a', a_text, 't', t_text, 'o', order)
        else
          redis.call('HSET', key, 's', 'active', 'a', a_text, 't', t_text)
        end
        leases[#leases + 1] = deadline
        leases[#leases + 1] = id
        held[#held + 1] = id
        held[#held + 1] = t_text
        -- a flow parent's children (docs/design.md, "Flows") go with it: its hash is in this slot
        local kids = false
        if r[at.fw] then kids = redis.call('HGETALL', kids_key(id)) end
        -- a job's durable steps (docs/design/steps.md) go with it too; an invoke it waited on is
        -- over once it is claimed (its parent was released: its child finished)
        local steps = false
        if r[at.sn] then
          local sw = r[at.sw]
          if sw and string.sub(sw, 1, 1) == 'i' then
            step_update(id, string.sub(sw, 2), { s = 'done', ft = now })
            redis.call('HDEL', key, 'sw')
          end
          steps = redis.call('HGETALL', step_key(id))
        end
        -- this run's attempt: the claims less those given back unstarted (\`z\`, rarely there); as
        -- text when it is the claim count's (a Lua number is formatted as a float where it is
        -- written into the reply and the \`active\` event)
        local run = r[4] and attempts - tonumber(r[4]) or a_text
        made_ids[#made_ids + 1] = id
        made_runs[#made_runs + 1] = run
        made[#made + 1] = claimed_job(id, t_text, group, run, r[3], r[5], r[6], r[at.fp], r[1], kids, steps, r[at.to])
      end
    end
    -- a group at its rate limit now (or already: nothing else takes it off the ring for it) is
    -- throttled until one more start fits in its window; the rewrite above took it off the ring
    if rate then
      log_starts(g, tokens, rate[2], now)
      if rate[3] + #tokens >= rate[1] then
        throttle(g, rate_due(g, rate[1], rate[2], now))
        redis.call('HINCRBY', K_META, 'rated', 1)
      end
    end
  end
  if q_limit then
    log_starts(QUEUE_ENTRY, started, q_period, now)
    if q_used + #started >= q_limit then
      throttle(QUEUE_ENTRY, rate_due(QUEUE_ENTRY, q_limit, q_period, now))
      redis.call('HINCRBY', K_META, 'rated', 1)
    end
  end
  -- handed out in turn order, as n single claims would: a consumer runs a batch in this order, so
  -- one entry's jobs listed together would run ahead of the other entries' turns
  local next_of = {}
  for _, i in ipairs(turns) do
    local c = (next_of[i] or 0) + 1
    next_of[i] = c
    if c <= (made_count[i] or 0) then
      local at = made_first[i] + c - 1
      jobs[#jobs + 1] = made[at]
      local g = entries[i]
      collect_event('active', made_ids[at], 'g', g ~= UNGROUPED and g or nil, 'a', made_runs[at])
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  -- a claim that counts many groups' jobs keeps their counts in a hashtable (includes/hash_as_table.lua):
  -- the hash is deleted each time its last count reaches 0, and made again packed
  if #counts >= 2 * HASH_AS_TABLE_FIELDS then hash_as_table(K_GACTIVE) end
  chunked('ZADD', K_ACTIVE, leases)
  return jobs, false, held
end
-- When the queue runs dry a consumer parks until the next thing that can make work claimable:
-- the next due time (a scheduled job or a scheduler's slot) and the earliest lease deadline (-1
-- for none).
local function next_times()
  return next_due(), first_lease()
end
-- A claim sent again (its reply was lost and the client repeated the request): the jobs the first
-- claim handed out, from its record \`seen\` (a JSON list id, token, id, token, ...), each still
-- held under that token, in claim_reply's shape. A job whose lease has lapsed or been settled
-- since is left out (its holder is fenced anyway). The lease of each job answered is renewed to
-- now + lease_ms, the deadline its holder reckons from this reply. The reply carries the next times.
local function replay_claim(seen, now, lease_ms)
  local held = cjson.decode(seen)
  local reply = { {} }
  for i = 1, #held, 2 do
    local id, token = held[i], held[i + 1]
    local r = redis.call('HMGET', job_key(id), 's', 't', 'd', 'g', 'a', 'z', 'm', 'c', 'x', 'fp', 'fw', 'sn', 'to')
    if r[1] == 'active' and r[2] == token then
      local runs = (tonumber(r[5]) or 0) - (tonumber(r[6]) or 0)
      local kids = false
      if r[11] then kids = redis.call('HGETALL', kids_key(id)) end
      local steps = r[12] and redis.call('HGETALL', step_key(id)) or false
      reply[#reply + 1] = claimed_job(id, token, r[4] or '', runs, r[7], r[8], r[9], r[10], r[3], kids, steps, r[13])
      redis.call('ZADD', K_ACTIVE, 'XX', now + lease_ms, id)
    end
  end
  local due_at, next_lease = next_times()
  reply[1] = { now, queue_meta().paused and 1 or 0, due_at, next_lease, 0, 0, 0 }
  return reply
end
-- The reply shared by claim, beat and complete-and-claim:
-- { {now, paused 0|1, next due time, next lease deadline, promoted, requeued, buried}, job, ... }
-- where each job is one string (includes/claimed_job.lua). When fewer than n jobs were claimed (n = 0 included), the
-- caller is about to park (or re-arm its timers): the reply carries the next times (-1 for none)
-- and the schedule bell is emptied, its news being in the reply. A claim that asked for n > 0 and
-- got fewer also empties the doorbell: nothing is claimable at this instant, so every token is
-- stale. Whatever is pushed after this atomic step is news, so no wake-up is ever lost.
-- A claim that got all n carries the next times too when the schedule bell holds a token (a job
-- became the earliest scheduled while no consumer was parked to hear it: a busy consumer arms its
-- timer from the reply), taking the token, or always with \`times\` (a beat); -1 otherwise.
-- With \`request_key\` (not ""), the claim is recorded under emq:{q}:req:<key> for its lease, so the
-- same request sent again (its reply lost) answers the same jobs instead of handing out others
-- and leaving these to lapse (includes/replay_claim.lua).
local function claim_reply(n, lease_ms, now, promoted, requeued, buried, times, request_key)
  local record = nil
  if request_key ~= nil and request_key ~= '' and n > 0 then
    record = PREFIX .. 'req:' .. request_key
    local seen = redis.call('GET', record)
    if seen then return replay_claim(seen, now, lease_ms) end
  end
  local jobs, paused, held = claim_jobs(n, lease_ms, now)
  if record and #jobs > 0 then
    redis.call('SET', record, cjson.encode(held), 'PX', string.format('%d', lease_ms))
  end
  local due_at, next_lease = -1, -1
  if #jobs < n or n == 0 then
    due_at, next_lease = next_times()
    if n > 0 then
      redis.call('DEL', K_WAKE, K_SCHED)
    else
      redis.call('DEL', K_SCHED)
    end
  elseif redis.call('DEL', K_SCHED) == 1 or times then
    due_at, next_lease = next_times()
  end
  local reply = { { now, paused and 1 or 0, due_at, next_lease, promoted, requeued, buried } }
  for _, job in ipairs(jobs) do reply[#reply + 1] = job end
  return reply
end
-- The row of scheduler \`id\`: emq:{q}:scheduler:<id> (a hash, docs/design.md "Schedulers").
local function scheduler_key(id)
  return PREFIX .. 'scheduler:' .. id
end
-- The schedulers whose next slot is due by \`now\`, at most \`limit\`, soonest first, as a flat list
-- of 5 values each: id, revision \`v\`, the slot due \`n\`, the spec \`k\` (JSON) and the anchor \`an\`
-- ('' for none). A beat hands them to its caller, which works out each one's next slot (cron
-- needs croner, which the scripts lack) and fires them with fire-schedulers.lua. Nothing is read
-- on a queue that never made a scheduler (meta \`sc\`).
local function due_schedulers(now, limit)
  local due = {}
  if not queue_meta().sc then return due end
  local ids = redis.call('ZRANGEBYSCORE', K_SCHEDULERS, '-inf', now, 'LIMIT', 0, limit)
  for _, id in ipairs(ids) do
    local r = redis.call('HMGET', scheduler_key(id), 'v', 'n', 'k', 'an')
    if r[1] and r[2] then
      due[#due + 1] = id
      due[#due + 1] = r[1]
      due[#due + 1] = r[2]
      due[#due + 1] = r[3] or ''
      due[#due + 1] = r[4] or ''
    end
  end
  return due
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

local reap_limit = arg_int(ARGV[2], 'reapLimit', 0)
local promote_limit = arg_int(ARGV[3], 'promoteLimit', 0)
local n = arg_int(ARGV[4], 'n', 0)
local lease_ms = arg_int(ARGV[5], 'leaseMs', 1)
local now = now_ms()
local requeued, buried, reaped_woke = 0, 0, false
if reap_limit > 0 then requeued, buried, reaped_woke = reap_expired(now, reap_limit) end
local promoted, promoted_woke = 0, false
if promote_limit > 0 then
  local moved, _, woke = promote_due(now, promote_limit)
  promoted, promoted_woke = moved, woke
end
-- throttled entries whose time has come (a hold over, a rate limit's window moved on) go back
local readmitted = promote_limit > 0 and readmit_due(now, promote_limit)
if reaped_woke or promoted_woke or readmitted then ring_doorbell() end
local reply = claim_reply(n, lease_ms, now, promoted, requeued, buried, true, ARGV[6])
reply[1][8] = due_schedulers(now, 100)
-- flow news to relay (docs/design.md, "Flows"): what this beat's reaping wrote (a child that died),
-- and entries older than 5 s, which the runtime that wrote them did not relay (it died, or its
-- relay failed): at most 100 a beat
local news = outbox_written
if queue_meta().fl then
  local stale = redis.call('ZRANGEBYSCORE', K_OUTBOX, '-inf', now - 5000, 'LIMIT', 0, 100)
  for _, e in ipairs(stale) do news[#news + 1] = e end
end
reply[1][9] = news
flush_events()
return reply
`,
  },
  changePriority: {
    name: "changePriority",
    sha1: "b58a3bc7e7c771129c023c8179b83973459a5bb1",
    lua: `--[[
  change-priority: give a job not running or finished (pending or scheduled) another priority. Its
  order becomes \`priority * 2^32 + (its seq mod 2^32)\`: among jobs of the new priority it keeps
  its place by arrival. A pending job moves within its lane (out of the arrivals list, if it was
  there, into the lane's zset: a list takes only newer orders than its own), so the lane, the ring
  and the group counts are as they were; a scheduled one keeps its due time and takes the new
  order with it to its lane when promoted. The same priority again changes nothing.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  ARGV[3]  priority (0 to 2097151, lower runs first)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1 changed (or already that priority), 0 no such job, -1 the job is active, completed or
           dead
  Errors   EMQKIND, EMQARG (a priority out of range), before anything is written
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end

local id = ARGV[2]
check_kind(id)
local priority = arg_int(ARGV[3], 'priority', 0)
if priority > 2097151 then error(redis.error_reply('EMQARG priority must be at most 2097151, got ' .. ARGV[3])) end
local key = job_key(id)
local r = redis.call('HMGET', key, 's', 'g', 'o', 'p')
if not r[1] then return 0 end
if r[1] ~= 'pending' and r[1] ~= 'scheduled' then return -1 end
if tonumber(r[4] or '0') == priority then return 1 end

local entry = r[2] or UNGROUPED
-- a pending job's order is its zset score, or its row's \`o\` when it waits in an arrivals list
local order, in_zset = nil, false
if r[1] == 'pending' then
  order = redis.call('ZSCORE', lane_key(entry), id)
  in_zset = order ~= false
end
if not in_zset then order = r[3] end
local SPAN = 4294967296
local new_order = string.format('%d', priority * SPAN + tonumber(order) % SPAN)
if priority == 0 then
  redis.call('HDEL', key, 'p')
  redis.call('HSET', key, 'o', new_order)
else
  redis.call('HSET', key, 'o', new_order, 'p', string.format('%d', priority))
end
if r[1] == 'pending' then
  if not in_zset then redis.call('LREM', fifo_key(entry), 1, id) end
  redis.call('ZADD', lane_key(entry), new_order, id)
end
return 1
`,
  },
  claim: {
    name: "claim",
    sha1: "8db0f83b9082897a20279ef57a37bcb36de0aeef",
    lua: `--[[
  claim: lease up to n jobs, one turn of the ring per job (fair across groups, ungrouped work
  taking its own turn), never past a group's limit, nothing while the queue is paused.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  n, the most jobs to claim (>= 1)
  ARGV[3]  leaseMs (>= 1): the lease deadline is the server's TIME plus this
  ARGV[4]  request key ("" = none): the same key again answers the jobs this claim handed out
           that are still held under its tokens (a repeat after a lost reply), claiming nothing
  Empties  the doorbell and the schedule bell when fewer than n jobs were claimed (see
           includes/claim_reply.lua): a consumer about to park must not wake for stale tokens
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>
  Reply    { {now, paused, next due, next lease deadline, 0, 0, 0}, job, ... }, each job one
           string "<id> <token> <group> <attempt of this run> <max attempts> <created at>
           <traceparent> <parent> <payload>" (a flow parent: that string and its children;
           includes/claimed_job.lua); the token (unique in the queue, kept in the row's \`t\`) fences every later call about
           the job
  Events   \`active\` (j, g, a) per job claimed, in turn order, in one entry; a repeat answered from
           the request key appends nothing
  Errors   EMQARG (a malformed number)
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- A lane's one order over its two parts, from their heads as read: \`z\`, a zset's ZRANGE WITHSCORES
-- (id, score, ...), and \`f\`, its arrivals list's LRANGE, whose members' orders are their rows' \`o\`;
-- the lower order goes first. Takes up to \`count\` ids from both in that order, and returns them,
-- their orders (nil where it is the row's \`o\`: a list member's), and how many of each part it
-- took. pop_lane pops what it took; lane_range pages through it. A row read only for a mix of
-- both parts.
local function merge_lane(z, f, count)
  local ids, orders = {}, {}
  local zi, fi, f_order = 1, 1, nil
  while #ids < count and (zi <= #z or fi <= #f) do
    if fi <= #f and not f_order then f_order = tonumber(redis.call('HGET', job_key(f[fi]), 'o')) or 0 end
    if zi <= #z and (fi > #f or tonumber(z[zi + 1]) < f_order) then
      ids[#ids + 1] = z[zi]
      orders[#ids] = z[zi + 1]
      zi = zi + 2
    else
      ids[#ids + 1] = f[fi]
      fi = fi + 1
      f_order = nil
    end
  end
  return ids, orders, (zi - 1) / 2, fi - 1
end
-- Take the \`count\` first jobs of ring entry g, whose zset holds \`zn\` and arrivals list \`fn\`
-- (count <= zn + fn; either is nil when the caller has not read it: then the zset's size is read
-- if need be, and the list's only if the zset holds any, and fewer than count may come back).
-- The lane's order is one order over both: each list member's order is its row's \`o\`, each zset
-- member's its score; the lower goes first. Returns the ids in that order and their orders; an
-- order is nil where it is the row's \`o\` (a list member), so only a mix of both parts reads rows
-- here; the orders are nil altogether when every job came from the arrivals list.
local function pop_lane(g, count, zn, fn)
  if not zn then zn = redis.call('ZCARD', lane_key(g)) end
  -- the count as text: a Lua number is formatted for Redis on every call it is passed to; from
  -- the arrivals list alone every order is its row's, so there are no orders to hand back
  if zn == 0 then return redis.call('LPOP', fifo_key(g), string.format('%d', count)) or {}, nil end
  local ids, orders = {}, {}
  if not fn then
    fn = redis.call('LLEN', fifo_key(g))
    count = math.min(count, zn + fn)
  end
  if fn == 0 then
    local popped = redis.call('ZPOPMIN', lane_key(g), string.format('%d', count))
    for p = 1, #popped, 2 do
      ids[#ids + 1] = popped[p]
      orders[#ids] = popped[p + 1]
    end
    return ids, orders
  end
  local z = redis.call('ZRANGE', lane_key(g), 0, count - 1, 'WITHSCORES')
  local f = redis.call('LRANGE', fifo_key(g), 0, count - 1)
  local zk, fk
  ids, orders, zk, fk = merge_lane(z, f, count)
  if zk > 0 then redis.call('ZPOPMIN', lane_key(g), zk) end
  if fk > 0 then redis.call('LPOP', fifo_key(g), fk) end
  return ids, orders
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- A stored rate limit, "limit:periodMs", as two numbers; nil for none (nil or false) or anything else.
local function parse_rate(spec)
  local limit, period = string.match(spec or '', '^(%d+):(%d+)$')
  if not limit then return nil end
  return tonumber(limit), tonumber(period)
end
-- The log of \`entry\`'s recent job starts (a zset: member a lease token, score the start's server
-- ms): emq:{q}:starts for the queue's own rate limit, emq:{q}:starts:<g> for group g's.
local function starts_key(entry)
  if entry == QUEUE_ENTRY then return PREFIX .. 'starts' end
  return PREFIX .. 'starts:' .. entry
end
-- How many jobs \`entry\` started within the window of \`period\` ms that ends now: its starts log
-- trimmed to the starts after now - period (a start at s counts until s + period), then counted.
local function rate_used(entry, period, now)
  local key = starts_key(entry)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - period))
  return redis.call('ZCARD', key)
end
-- When \`entry\` may start one more job under its rate limit (\`limit\` starts per \`period\` ms): now
-- when fewer than \`limit\` starts are in the window, else the time enough of them leave it that
-- one more fits (the (used - limit + 1)th oldest start plus the period).
local function rate_due(entry, limit, period, now)
  local used = rate_used(entry, period, now)
  if used < limit then return now end
  local at = redis.call('ZRANGE', starts_key(entry), used - limit, used - limit, 'WITHSCORES')[2]
  return tonumber(at) + period
end
-- Record in \`entry\`'s starts log that the jobs with lease tokens \`tokens\` (numbers) started at
-- \`now\`; the log expires a period after its newest start, when none of it counts any more.
local function log_starts(entry, tokens, period, now)
  if #tokens == 0 then return end
  local key, at, args = starts_key(entry), string.format('%d', now), {}
  for _, t in ipairs(tokens) do
    args[#args + 1] = at
    args[#args + 1] = string.format('%d', t)
  end
  chunked('ZADD', key, args)
  redis.call('PEXPIRE', key, string.format('%d', period))
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- The earliest next slot of any scheduler (ms), or -1 when none will fire: a scheduler that fires
-- no more waits in \`schedulers\` with the score +inf, which Redis answers as "inf". A queue that
-- never made a scheduler (meta \`sc\` unset) has none: nothing is read.
local function first_slot()
  if not queue_meta().sc then return -1 end
  local score = redis.call('ZRANGE', K_SCHEDULERS, 0, 0, 'WITHSCORES')[2]
  if score == nil or score == 'inf' then return -1 end
  return tonumber(score)
end
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then. The throttled entries are read only once
-- any was (meta \`th\`), the waits' timeouts once a step was (meta \`st\`).
-- The earliest timeout of a wait for an event (a wait without one scores +inf): -1 for none.
local function first_timeout()
  local at = tonumber(redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  return at or -1
end
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), queue_meta().th and first_score(K_THROTTLED) or -1,
    queue_meta().st and first_timeout() or -1 }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- The schedule bell for a time \`at\` (ms) that was just written (a scheduler's next slot): when it
-- is now the next due time of the queue, push a token onto \`sched\` so a parked consumer re-reads
-- the next due time and sets its timer (a slot already due runs a beat at once).
local function ring_sched_bell_at(at)
  if at >= 0 and next_due() == at then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
-- Throttle \`entry\` (a ring entry, or QUEUE_ENTRY) until \`at\` (ms): into K_THROTTLED at that score,
-- or at its later one if it is there already (a throttled entry is off the ring; the caller takes
-- it off). \`at\` is a due time the scripts know (includes/next_due.lua): when it is the queue's
-- next one the schedule bell rings, so parked consumers set their timers for it. The queue's
-- first throttle sets meta \`th\`, under which the scripts read \`throttled\` at all.
local function throttle(entry, at)
  mark_feature('th')
  redis.call('ZADD', K_THROTTLED, 'GT', string.format('%d', at), entry)
  ring_sched_bell_at(at)
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- The active zset kept in Redis's skiplist encoding. Redis keeps a zset of at most 128 members
-- (zset-max-listpack-entries) as a listpack, where each ZADD or ZREM of a member walks the whole
-- list: a drain that claims and completes 100 jobs a call into a zset of about 100 spent some
-- 24k of its 137k instructions a job there (callgrind; 6k as a skiplist). A member longer than
-- 64 bytes (zset-max-listpack-value) makes the zset a skiplist and keeps it one, so a claim of
-- ACTIVE_SKIPLIST_BATCH jobs or more adds this member, first in its ZADD (a new zset's encoding
-- follows the first member), scored +inf: no lease ever ends there, so the reads by deadline
-- (reap's expired range) never see it, and the reads of the leases go up to, not including, +inf
-- (first_lease, lease_count, the listings). It is not a job id (ids are "JOB:..."); the keyspace
-- checker allows it and nothing else that is not a leased job (docs/design/keyspace.md).
local ACTIVE_SKIPLIST_MEMBER = '~ keeps this zset a skiplist: a listpack zset walks all its members on each ZADD and ZREM ~'
local ACTIVE_SKIPLIST_BATCH = 32
-- The earliest lease deadline (ms), -1 for none.
local function first_lease()
  return tonumber(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]) or -1
end
-- How many jobs are leased.
local function lease_count()
  return redis.call('ZCOUNT', K_ACTIVE, '-inf', '(+inf')
end
-- The leased jobs from the \`offset\`th soonest deadline on, at most \`limit\` (ids and deadlines,
-- flat, as ZRANGE WITHSCORES answers; ids only without \`scores\`).
local function lease_range(offset, limit, scores)
  if scores then
    return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', offset, limit)
  end
  return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'LIMIT', offset, limit)
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- A claimed job as a claim's reply carries it: one string, its fields joined by single spaces and
-- the payload last, "<id> <token> <group> <attempt of this run> <max attempts> <created> <traceparent>
-- <parent> <timeout> <payload>" ('' for a field it lacks: no group, no traceparent, not a flow child), or, for
-- a flow parent or a job with durable steps, { that string, its children hash flat (\`kids\`, false
-- for none: 0 in the reply), its steps hash flat (\`steps\`, absent for none: docs/design/steps.md) }. No field but the
-- payload can hold a space: ids, group and queue names and traceparents are checked for their
-- characters before they are written (src/encode.ts, src/keyspace.ts), and the payload, which
-- may, comes last (src/ops/claim.ts reads it). One string where a table of ten was: Redis writes,
-- and the client reads, one reply element a job instead of eleven.
-- \`token\` and \`attempt\` are text or numbers (a Lua number below 2^53 concatenates in full), the
-- rest text as the row holds it (\`max_attempts\` nil for the default, \`created\` its \`c\`).
local function claimed_job(id, token, group, attempt, max_attempts, created, traceparent, parent, payload, kids, steps, timeout)
  local wire = id .. ' ' .. token .. ' ' .. group .. ' ' .. attempt .. ' ' .. (max_attempts or DEFAULT_MAX_ATTEMPTS)
    .. ' ' .. (created or '') .. ' ' .. (traceparent or '') .. ' ' .. (parent or '') .. ' ' .. (timeout or '') .. ' ' .. payload
  if steps then return { wire, kids or 0, steps } end
  if kids then return { wire, kids } end
  return wire
end
-- Turn hash \`key\` into Redis's hashtable encoding for good: a field written with a value longer
-- than hash-max-listpack-value (64 by default) converts it, and deleting that field does not
-- convert it back (Redis never packs a hash again while it exists), so nothing stays behind for
-- any reader to skip. Redis keeps a hash of up to 128 fields as a listpack, one packed list that
-- every HGET, HMGET field and HSET walks: the groups' limits and active counts of a queue of 100
-- groups, read and written a field per group at every claim and settle, cost a grouped drain 11%
-- of its instructions that way (bench:instructions drain-groups). On a server that packs nothing
-- the two commands change nothing. The field \`~\` is no group name (src/keyspace.ts NAME).
-- Callers convert a hash once it holds HASH_AS_TABLE_FIELDS fields or more: below that a walk of
-- the packed list costs about what a hashtable's lookup does, and a queue of a few groups keeps
-- its small hashes small.
local HASH_AS_TABLE_FIELDS = 16
local HASH_AS_TABLE_VALUE = '~ a value over 64 bytes: writing it makes this hash a hashtable for good ~'
local function hash_as_table(key)
  redis.call('HSET', key, '~', HASH_AS_TABLE_VALUE)
  redis.call('HDEL', key, '~')
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- Rewrite step \`index\` of job \`id\` (its record, JSON: n name, k kind, s state, r result as JSON
-- text, e error, a attempts, st and ft started and finished ms, u until ms, ev event, ei the
-- event's id, cq and ci an invoked child) with \`fields\` set on it (a value false deletes the
-- field). Returns the record as written, nil when the job has no such step. Only the records a
-- suspension or its end rewrite come through here (a sleep's, a wait's, an invoke's): a run
-- step's result is written whole by step.lua, never decoded by a script.
local function step_update(id, index, fields)
  local key = step_key(id)
  local text = redis.call('HGET', key, index)
  if not text then return nil end
  local record = cjson.decode(text)
  for f, v in pairs(fields) do
    if v == false then record[f] = nil else record[f] = v end
  end
  redis.call('HSET', key, index, cjson.encode(record))
  return record
end
-- Claim up to n jobs under a lease of lease_ms from the server time \`now\`, as n turns of the
-- ring: each turn takes the head entry's next job and sends the entry to the back while it is
-- still serviceable, so one busy group cannot starve the others and ungrouped work (the entry
-- UNGROUPED) takes its own turn. A limited group never goes past its limit. The turns are
-- simulated in memory over at most n entries read at once, then the ring is rewritten in two
-- commands (none when its order is unchanged), so a batch costs a few commands per entry instead
-- of per turn.
-- Rate limits (docs/design.md, "Rate limits and holds"): the queue's caps the jobs of the whole
-- claim, a group's its entry's share, at the limit less the starts in the window before now; an
-- entry (or the queue) this claim takes to its limit is throttled until it may start one more, so
-- it is off the ring (and the queue's claims hand out nothing) until a beat readmits it.
-- Each claim increments the row's attempts and takes a lease token from the queue-wide counter
-- meta.fence, written to the row's \`t\`: unique across every life of an id (a removed id enqueued
-- again starts its attempts from 0, but never its tokens), so a stale holder is always fenced.
-- The bare token replaces the mark a settle left there (includes/settled_token.lua): from this
-- claim on, a settle of an earlier lease sent again is fenced off too.
-- The claim also writes the job's order into the row's \`o\` (a job waiting in a zset has it only as
-- its score): a job out of its lane needs it to go back in its place (retry, reap, release,
-- reprocess). The lane's zset and arrivals list are popped as one order (includes/pop_lane.lua).
-- Returns the jobs as a claim's reply carries them (includes/claimed_job.lua) in turn order (what
-- n single claims would hand out, one by one), whether the queue is paused, and the ids and
-- tokens handed out (flat: id, token as text, ...), for a request's record (claim_reply).
-- Collects an \`active\` event (j, g, a) per job in turn order: the caller flushes.
local function claim_jobs(n, lease_ms, now)
  local jobs, held = {}, {}
  -- paused, the queue's rate limit ("limit:periodMs") and how many groups have one: the call's one read of meta
  local meta = queue_meta()
  if meta.paused then return jobs, true, held end
  if n <= 0 then return jobs, false, held end
  local q_limit, q_period, q_used
  q_limit, q_period = parse_rate(meta.rate)
  if q_limit then
    q_used = rate_used(QUEUE_ENTRY, q_period, now)
    if q_used >= q_limit then
      throttle(QUEUE_ENTRY, rate_due(QUEUE_ENTRY, q_limit, q_period, now))
      return jobs, false, held
    end
    n = math.min(n, q_limit - q_used)
  end
  -- one entry more than needed tells whether the fetched entries are the whole ring: a whole ring
  -- whose order the turns leave as it was needs no rewrite (a lone entry claimed one at a time)
  local entries = redis.call('LRANGE', K_RING, 0, n)
  local whole = #entries <= n
  if not whole then entries[#entries] = nil end
  local k = #entries
  if k == 0 then return jobs, false, held end

  local limits, actives, named = {}, {}, {}
  for _, g in ipairs(entries) do
    if g ~= UNGROUPED then named[#named + 1] = g end
  end
  if #named > 0 then
    local l = chunked('HMGET', K_GLIMIT, named)
    local a = chunked('HMGET', K_GACTIVE, named)
    for i, g in ipairs(named) do
      limits[g] = tonumber(l[i])
      actives[g] = tonumber(a[i]) or 0
    end
  end
  -- the groups' rate limits, read only when some group has one: each one's headroom is its limit
  -- less its starts in the window (rates[g] = {limit, period, used})
  local rates = {}
  if #named > 0 and tonumber(meta.grates or '0') > 0 then
    local specs = chunked('HMGET', K_GRATE, named)
    for i, g in ipairs(named) do
      local limit, period = parse_rate(specs[i])
      if limit then
        rates[g] = { limit, period, rate_used(g, period, now) }
      end
    end
  end
  -- whether no entry's zset holds a job (most jobs wait in arrivals lists): one EXISTS for all
  -- (a zset with no member does not exist) spares each entry its zset's size
  local zsets = {}
  for i, g in ipairs(entries) do zsets[i] = lane_key(g) end
  local no_zsets = count_existing(zsets) == 0
  -- what each entry can hand out: its lane's size, within its group's headroom. An entry on the
  -- ring has work and is open (the ring's invariant), so with a headroom of one it hands out one
  -- job, and its arrivals list's length is left for pop_lane to read as it needs it
  local avail, take, queue, zsize, fsize = {}, {}, {}, {}, {}
  for i, g in ipairs(entries) do
    local room = limits[g] and limits[g] - actives[g]
    local rate = rates[g]
    if rate and (not room or rate[1] - rate[3] < room) then room = rate[1] - rate[3] end
    local c
    if no_zsets then zsize[i] = 0 end
    if room and room <= 1 then
      c = math.max(room, 0)
    else
      zsize[i] = zsize[i] or redis.call('ZCARD', lane_key(g))
      fsize[i] = redis.call('LLEN', fifo_key(g))
      c = zsize[i] + fsize[i]
      if room then c = math.min(c, room) end
    end
    avail[i], take[i], queue[i] = c, 0, i
  end

  -- the turns: a whole ring (fewer entries than n) goes round again; a longer one gets one pass
  local head, tail, total = 1, k, 0
  local turns = {} -- the entry of each turn, in turn order: the order the jobs are handed out
  while total < n and head <= tail and (whole or head <= k) do
    local i = queue[head]
    head = head + 1
    if avail[i] > take[i] then
      take[i] = take[i] + 1
      total = total + 1
      turns[total] = i
      if avail[i] > take[i] then
        tail = tail + 1
        queue[tail] = i
      end
    end
  end

  -- the ring afterwards: the fetched prefix replaced by what is still serviceable, in turn order
  local rest, seen, changed = {}, {}, not whole
  for j = head, tail do
    local g = entries[queue[j]]
    if not seen[g] then
      seen[g] = true
      rest[#rest + 1] = g
    end
  end
  if whole and #rest == k then
    for i = 1, k do
      if rest[i] ~= entries[i] then changed = true end
    end
  else
    changed = true
  end
  if changed then
    redis.call('LTRIM', K_RING, k, -1)
    chunked('RPUSH', K_RING, rest)
  end

  -- the fields of each claimed row: a flow's, the steps' and a job's own timeout only in a queue
  -- that ever had them (includes/queue_meta.lua)
  local row_fields = { 'd', 'a', 'm', 'z', 'c', 'x' }
  if meta.fl or meta.st then row_fields[7], row_fields[8] = 'fp', 'fw' end
  if meta.st then row_fields[#row_fields + 1], row_fields[#row_fields + 2] = 'sn', 'sw' end
  if meta.tm then row_fields[#row_fields + 1] = 'to' end
  -- where each optional field is in a row's reply (nil: not asked for, so r[nil] is nil)
  local at = {}
  for i = 7, #row_fields do at[row_fields[i]] = i end
  -- the deadline as text once: a Lua number is formatted for Redis on every call it is passed to
  local deadline = string.format('%d', now + lease_ms)
  -- a big claim keeps the active zset a skiplist (includes/active_skiplist.lua)
  local leases = total >= ACTIVE_SKIPLIST_BATCH and { '+inf', ACTIVE_SKIPLIST_MEMBER } or {}
  local token = 0
  if total > 0 then token = redis.call('HINCRBY', K_META, 'fence', total) - total end
  -- the jobs as the reply carries them, their ids and this run's attempts, entry by entry in pop
  -- order: an entry's are \`made_count[i]\` of them from \`made_first[i]\` on (flat arrays, not three
  -- tables an entry: a grouped claim takes one job from each of dozens of entries)
  local made, made_ids, made_runs, made_first, made_count = {}, {}, {}, {}, {}
  -- the groups' new active counts, written in one HSET (their old ones were read above)
  local counts = {}
  -- the tokens handed out, for the queue's starts log when it has a rate limit
  local started = {}
  for i, g in ipairs(entries) do
    local rate = rates[g]
    -- the tokens handed out for this entry, for its starts log: only an entry with a rate limit keeps one
    local tokens = rate and {} or nil
    if take[i] > 0 then
      local ids, orders = pop_lane(g, take[i], zsize[i], fsize[i])
      made_first[i], made_count[i] = #made + 1, #ids
      local group = g ~= UNGROUPED and g or ''
      if g ~= UNGROUPED and #ids > 0 then
        counts[#counts + 1] = g
        counts[#counts + 1] = string.format('%d', actives[g] + #ids)
      end
      for p, id in ipairs(ids) do
        local key = job_key(id)
        -- a flow's fields only in a queue that ever had a flow job (includes/queue_meta.lua)
        local r = redis.call('HMGET', key, unpack(row_fields))
        local attempts = (tonumber(r[2]) or 0) + 1
        token = token + 1
        if tokens then tokens[#tokens + 1] = token end
        if q_limit then started[#started + 1] = token end
        -- the numbers as text (see the deadline above); a job from the arrivals list has its order
        -- in its row already (orders[p] is nil)
        local a_text, t_text = string.format('%d', attempts), string.format('%d', token)
        local order = orders and orders[p]
        if order then
          redis.call('HSET', key, 's', 'active', 'a', a_text, 't', t_text, 'o', order)
        else
          redis.call('HSET', key, 's', 'active', 'a', a_text, 't', t_text)
        end
        leases[#leases + 1] = deadline
        leases[#leases + 1] = id
        held[#held + 1] = id
        held[#held + 1] = t_text
        -- a flow parent's children (docs/design.md, "Flows") go with it: its hash is in this slot
        local kids = false
        if r[at.fw] then kids = redis.call('HGETALL', kids_key(id)) end
        -- a job's durable steps (docs/design/steps.md) go with it too; an invoke it waited on is
        -- over once it is claimed (its parent was released: its child finished)
        local steps = false
        if r[at.sn] then
          local sw = r[at.sw]
          if sw and string.sub(sw, 1, 1) == 'i' then
            step_update(id, string.sub(sw, 2), { s = 'done', ft = now })
            redis.call('HDEL', key, 'sw')
          end
          steps = redis.call('HGETALL', step_key(id))
        end
        -- this run's attempt: the claims less those given back unstarted (\`z\`, rarely there); as
        -- text when it is the claim count's (a Lua number is formatted as a float where it is
        -- written into the reply and the \`active\` event)
        local run = r[4] and attempts - tonumber(r[4]) or a_text
        made_ids[#made_ids + 1] = id
        made_runs[#made_runs + 1] = run
        made[#made + 1] = claimed_job(id, t_text, group, run, r[3], r[5], r[6], r[at.fp], r[1], kids, steps, r[at.to])
      end
    end
    -- a group at its rate limit now (or already: nothing else takes it off the ring for it) is
    -- throttled until one more start fits in its window; the rewrite above took it off the ring
    if rate then
      log_starts(g, tokens, rate[2], now)
      if rate[3] + #tokens >= rate[1] then
        throttle(g, rate_due(g, rate[1], rate[2], now))
        redis.call('HINCRBY', K_META, 'rated', 1)
      end
    end
  end
  if q_limit then
    log_starts(QUEUE_ENTRY, started, q_period, now)
    if q_used + #started >= q_limit then
      throttle(QUEUE_ENTRY, rate_due(QUEUE_ENTRY, q_limit, q_period, now))
      redis.call('HINCRBY', K_META, 'rated', 1)
    end
  end
  -- handed out in turn order, as n single claims would: a consumer runs a batch in this order, so
  -- one entry's jobs listed together would run ahead of the other entries' turns
  local next_of = {}
  for _, i in ipairs(turns) do
    local c = (next_of[i] or 0) + 1
    next_of[i] = c
    if c <= (made_count[i] or 0) then
      local at = made_first[i] + c - 1
      jobs[#jobs + 1] = made[at]
      local g = entries[i]
      collect_event('active', made_ids[at], 'g', g ~= UNGROUPED and g or nil, 'a', made_runs[at])
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  -- a claim that counts many groups' jobs keeps their counts in a hashtable (includes/hash_as_table.lua):
  -- the hash is deleted each time its last count reaches 0, and made again packed
  if #counts >= 2 * HASH_AS_TABLE_FIELDS then hash_as_table(K_GACTIVE) end
  chunked('ZADD', K_ACTIVE, leases)
  return jobs, false, held
end
-- When the queue runs dry a consumer parks until the next thing that can make work claimable:
-- the next due time (a scheduled job or a scheduler's slot) and the earliest lease deadline (-1
-- for none).
local function next_times()
  return next_due(), first_lease()
end
-- A claim sent again (its reply was lost and the client repeated the request): the jobs the first
-- claim handed out, from its record \`seen\` (a JSON list id, token, id, token, ...), each still
-- held under that token, in claim_reply's shape. A job whose lease has lapsed or been settled
-- since is left out (its holder is fenced anyway). The lease of each job answered is renewed to
-- now + lease_ms, the deadline its holder reckons from this reply. The reply carries the next times.
local function replay_claim(seen, now, lease_ms)
  local held = cjson.decode(seen)
  local reply = { {} }
  for i = 1, #held, 2 do
    local id, token = held[i], held[i + 1]
    local r = redis.call('HMGET', job_key(id), 's', 't', 'd', 'g', 'a', 'z', 'm', 'c', 'x', 'fp', 'fw', 'sn', 'to')
    if r[1] == 'active' and r[2] == token then
      local runs = (tonumber(r[5]) or 0) - (tonumber(r[6]) or 0)
      local kids = false
      if r[11] then kids = redis.call('HGETALL', kids_key(id)) end
      local steps = r[12] and redis.call('HGETALL', step_key(id)) or false
      reply[#reply + 1] = claimed_job(id, token, r[4] or '', runs, r[7], r[8], r[9], r[10], r[3], kids, steps, r[13])
      redis.call('ZADD', K_ACTIVE, 'XX', now + lease_ms, id)
    end
  end
  local due_at, next_lease = next_times()
  reply[1] = { now, queue_meta().paused and 1 or 0, due_at, next_lease, 0, 0, 0 }
  return reply
end
-- The reply shared by claim, beat and complete-and-claim:
-- { {now, paused 0|1, next due time, next lease deadline, promoted, requeued, buried}, job, ... }
-- where each job is one string (includes/claimed_job.lua). When fewer than n jobs were claimed (n = 0 included), the
-- caller is about to park (or re-arm its timers): the reply carries the next times (-1 for none)
-- and the schedule bell is emptied, its news being in the reply. A claim that asked for n > 0 and
-- got fewer also empties the doorbell: nothing is claimable at this instant, so every token is
-- stale. Whatever is pushed after this atomic step is news, so no wake-up is ever lost.
-- A claim that got all n carries the next times too when the schedule bell holds a token (a job
-- became the earliest scheduled while no consumer was parked to hear it: a busy consumer arms its
-- timer from the reply), taking the token, or always with \`times\` (a beat); -1 otherwise.
-- With \`request_key\` (not ""), the claim is recorded under emq:{q}:req:<key> for its lease, so the
-- same request sent again (its reply lost) answers the same jobs instead of handing out others
-- and leaving these to lapse (includes/replay_claim.lua).
local function claim_reply(n, lease_ms, now, promoted, requeued, buried, times, request_key)
  local record = nil
  if request_key ~= nil and request_key ~= '' and n > 0 then
    record = PREFIX .. 'req:' .. request_key
    local seen = redis.call('GET', record)
    if seen then return replay_claim(seen, now, lease_ms) end
  end
  local jobs, paused, held = claim_jobs(n, lease_ms, now)
  if record and #jobs > 0 then
    redis.call('SET', record, cjson.encode(held), 'PX', string.format('%d', lease_ms))
  end
  local due_at, next_lease = -1, -1
  if #jobs < n or n == 0 then
    due_at, next_lease = next_times()
    if n > 0 then
      redis.call('DEL', K_WAKE, K_SCHED)
    else
      redis.call('DEL', K_SCHED)
    end
  elseif redis.call('DEL', K_SCHED) == 1 or times then
    due_at, next_lease = next_times()
  end
  local reply = { { now, paused and 1 or 0, due_at, next_lease, promoted, requeued, buried } }
  for _, job in ipairs(jobs) do reply[#reply + 1] = job end
  return reply
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

local n = arg_int(ARGV[2], 'n', 1)
local lease_ms = arg_int(ARGV[3], 'leaseMs', 1)
local reply = claim_reply(n, lease_ms, now_ms(), 0, 0, 0, false, ARGV[4])
flush_events()
return reply
`,
  },
  clean: {
    name: "clean",
    sha1: "53fef79fe2903d90af638b4f0128790f6f8c0558",
    lua: `--[[
  clean: delete finished jobs that finished at or before a cutoff, oldest first, at most n rows a
  call: one chunk of Queue.clean, which calls again while \`more\` says so (a million-row clean is
  a thousand short calls, never one long one). Only finished jobs: completed (emq:{q}:completed)
  and dead; waiting work is drain's or remove's.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  state: completed | dead
  ARGV[3]  olderThanMs (>= 0): the cutoff is the server's time less this, when ARGV[4] is -1
  ARGV[4]  cutoff (epoch ms), or -1: the first chunk works it out and answers it, and the later
           chunks of the same clean pass it, so one clean has one cutoff however long it runs
  ARGV[5]  n (>= 1): the most index entries this call takes
  ARGV[6]  request key ("" = none): the same key again answers this call's reply and deletes
           nothing more (a reply lost and the call sent again)
  ARGV[7]  how long the request key is remembered, ms (>= 1 with a key)
  Derives  emq:{q}:job:<id>, emq:{q}:req:<request key>
  Reply    {cutoff, more 0|1 (entries at or before the cutoff remain), {id, ...} the rows deleted,
           {flow news: outbox entries, a flow parent's unfinished children to remove}}.
           A completed entry whose row expired, or whose id was enqueued again, leaves the index
           and is not in the list
  Events   \`cleaned\` (n: the rows deleted, s: the state) when it deleted any; a repeat answered
           from the request key appends nothing
  Dedupe   each row deleted releases its dedupe key while it names the job (includes/delete_rows.lua)
  Errors   EMQARG (another state, a malformed number), before anything is written
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- A row with durable steps (its \`sn\`) about to be deleted takes its steps with it
-- (docs/design/steps.md): its steps hash, its place among the sleepers and the jobs awaiting an
-- event, and among its wait's waiters (\`wk\`, the row's, nil when it waits for none).
local function forget_steps(id, wk)
  redis.call('DEL', step_key(id))
  redis.call('ZREM', PREFIX .. 'sleeping', id)
  redis.call('ZREM', PREFIX .. 'awaiting', id)
  if wk then redis.call('ZREM', wk, id) end
end
-- Delete the rows of jobs \`ids\`, one DEL per 1000 (Lua's unpack has a limit), releasing each
-- one's dedupe key (\`dk\`, either mode) while it still names the job. Only in a queue where a job
-- ever took a key (meta \`dd\`, asked once a call) is each row's \`dk\` read: a queue that never used
-- deduplication pays one HMGET a call, not a command a row. Likewise in a queue where a job of a
-- flow was ever written (meta \`fl\`), each row's links are read and settled (forget_flow: a child
-- tells its parent, a parent has its unfinished children removed, through the outbox), and in a
-- queue where a step was ever recorded (meta \`st\`), each row's steps go with it (forget_steps).
local dedupe_used, flows_used, steps_used = nil, nil, nil
local function delete_rows(ids)
  if #ids == 0 then return end
  if dedupe_used == nil then
    local m = redis.call('HMGET', K_META, 'dd', 'fl', 'st')
    dedupe_used, flows_used, steps_used = m[1] ~= false, m[2] ~= false, m[3] ~= false
  end
  local keys = {}
  local now = flows_used and now_ms() or 0
  for i, id in ipairs(ids) do
    keys[i] = job_key(id)
    if flows_used then
      local r = redis.call('HMGET', keys[i], 'dk', 's', 'fp', 'fw', 't')
      release_dedupe(id, r[1])
      if r[3] or r[4] then forget_flow(id, r[2], r[3], r[4], r[5], now) end
    elseif dedupe_used then
      release_dedupe(id, redis.call('HGET', keys[i], 'dk'))
    end
    if steps_used then
      local s = redis.call('HMGET', keys[i], 'sn', 'wk')
      if s[1] then forget_steps(id, s[2]) end
    end
  end
  for i = 1, #keys, 1000 do redis.call('DEL', unpack(keys, i, math.min(i + 999, #keys))) end
end
-- What a bulk admin call answered when it ran before under request key \`key\` (not ""): its reply
-- was lost and the same call sent again, so it answers the same and writes nothing. nil when the
-- key is "" or unseen. The record is emq:{q}:req:<key>, written by record_reply.
local function recorded_reply(key)
  if key == '' then return nil end
  local seen = redis.call('GET', PREFIX .. 'req:' .. key)
  if seen then return cjson.decode(seen) end
  return nil
end
-- Remember \`reply\` under request key \`key\` for \`ttl\` ms (nothing for key ""), so the same call sent
-- again answers it (recorded_reply); returns \`reply\`. A reply is numbers and strings in nested
-- lists, which cjson carries both ways (an empty list comes back as an empty list).
local function record_reply(key, ttl, reply)
  if key ~= '' then redis.call('SET', PREFIX .. 'req:' .. key, cjson.encode(reply), 'PX', ttl) end
  return reply
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end

local state = ARGV[2]
if state ~= 'completed' and state ~= 'dead' then
  error(redis.error_reply('EMQARG clean takes completed or dead, got ' .. tostring(state)))
end
local older = arg_int(ARGV[3], 'olderThanMs', 0)
local cutoff = arg_int(ARGV[4], 'cutoff', -1)
local n = arg_int(ARGV[5], 'n', 1)
local request = ARGV[6]
local ttl = 0
if request ~= '' then ttl = arg_int(ARGV[7], 'requestTtlMs', 1) end
local seen = recorded_reply(request)
if seen then return seen end

if cutoff < 0 then cutoff = now_ms() - older end
local cutoff_text = string.format('%d', cutoff)
local index = K_DEAD
if state == 'completed' then index = K_COMPLETED end
local ids = redis.call('ZRANGEBYSCORE', index, '-inf', cutoff_text, 'LIMIT', 0, n)
local removed = {}
for _, id in ipairs(ids) do
  if redis.call('HGET', job_key(id), 's') == state then removed[#removed + 1] = id end
end
delete_rows(removed)
chunked('ZREM', index, ids)
if #removed > 0 then emit('cleaned', nil, 'n', string.format('%d', #removed), 's', state) end
local more = 0
if #redis.call('ZRANGEBYSCORE', index, '-inf', cutoff_text, 'LIMIT', 0, 1) > 0 then more = 1 end
return record_reply(request, ttl, { cutoff, more, removed, outbox_written })
`,
  },
  complete: {
    name: "complete",
    sha1: "b66a4b0a7a9f69b7f76c4d4d4c99871b0b0dede2",
    lua: `--[[
  complete: finish leased jobs, each fenced on (id, token); optionally claim the next jobs in the
  same call.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  keepMs: how long a completed row stays readable (-1 forever, 0 deleted at once)
  ARGV[3]  claimN (>= 0): jobs to claim after completing (0 = none)
  ARGV[4]  leaseMs (>= 1) for those claims
  ARGV[5]  request key of the claim ("" = none; see claim.lua)
  ARGV[6..] triples: id, token, result: the handler's result as JSON text, written to the row's
           \`r\` ('' for none: the handler returned nothing; the core checks it is JSON within
           maxResultBytes)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>,
           emq:{q}:minutes
  Counts   meta \`completed\` and the minute's bucket (emq:{q}:minutes, includes/count_minute.lua)
           += the jobs completed, one HINCRBY each a call
  Index    each completed row is indexed in emq:{q}:completed (score = finished ms) unless keepMs
           is 0, and entries older than keepMs leave it (includes/index_completed.lua)
  Reply    { {code, ...}, claim reply or {} } with code 1 completed, 0 fenced off (the row is not
           active under that token: the lease was reaped or the job removed; nothing changed).
           A repeat (the same id and token again: a reply lost and the request sent again)
           answers 1 while the completed row lasts and writes nothing (no second count, no slot
           freed twice, no doorbell); with keepMs 0 the row is gone and a repeat answers 0
  Events   \`completed\` (j, g, a; the result as \`r\`, or \`rt\` when it is over the queue's \`erb\`) per
           job completed, in ARGV order, then claim's \`active\` ones, in one entry; a fenced-off
           job or a repeat appends nothing
  Repeats  a row \`completed\` whose \`t\` is the given token was completed by this very settle: only
           complete writes \`completed\`, into a row active under the token, and leaves \`t\` as the
           claim wrote it; a token is handed out once in the queue (invariant 4, claim_jobs) and
           nothing moves a completed row on (it expires or is removed)
  Dedupe   a job's until-finished dedupe key (its row's \`dk\` without \`dt\`) is released
           (includes/release_settled.lua); a ttl key is left to expire
  Errors   EMQKIND, EMQARG, raised before anything is written
  Rings    the doorbell when a freed group slot made work claimable
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- The fence of complete: whether job \`id\` is active under lease token \`token\`. Returns {group or
-- nil, this run's attempt (\`a - z\`, a number, or the row's \`a\` as text when there is no \`z\`), its dedupe key \`dk\` or false, its key's ttl \`dt\` or false,
-- a flow child's parent \`fp\` or false, a flow parent's \`fw\` or false} when it is, for the settle,
-- its \`completed\` event, the key it releases (release_settled) and its flow links, else nil and
-- the row's state and \`t\` (false when absent), for each_held's repeat check. Reads the row in one
-- HMGET of the fields this call needs, worked out once (includes/queue_meta.lua): \`s\`, \`t\` and \`g\`;
-- \`a\` and \`z\` only while events are on (this run's attempt is only the events'); the dedupe and
-- flow fields only once the queue ever had them. A settling batch pays per job for every field it
-- asks for, there or not (the attempt is 0 with events off, the others false).
local held_fields, held_attempt, held_links = nil, nil, nil
local function held_run(id, token)
  if not held_fields then
    local meta = queue_meta()
    held_fields = { 's', 't', 'g' }
    if meta.ecap ~= '0' then
      held_attempt = #held_fields + 1
      held_fields[held_attempt], held_fields[held_attempt + 1] = 'a', 'z'
    end
    if meta.dd or meta.fl then
      held_links = #held_fields + 1
      for i, f in ipairs({ 'dk', 'dt', 'fp', 'fw' }) do held_fields[held_links + i - 1] = f end
    end
  end
  local r = redis.call('HMGET', job_key(id), unpack(held_fields))
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  -- the row's own text when no claim was given back (\`z\` absent): a Lua number is formatted as a
  -- float where the event writes it
  local attempt = 0
  if held_attempt then
    local z = r[held_attempt + 1]
    attempt = z and (tonumber(r[held_attempt]) or 0) - tonumber(z) or (r[held_attempt] or 0)
  end
  if not held_links then return { r[3] or nil, attempt, false, false, false, false } end
  local l = held_links
  return { r[3] or nil, attempt, r[l] or false, r[l + 1] or false, r[l + 2] or false, r[l + 3] or false }
end
-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index \`first\`, \`stride\` values
-- each. \`fence(id, token)\` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token (then the row's state
-- and \`t\` after it); \`act(id, held, i)\` settles a held job (\`held\` what fence returned, \`i\` the index
-- of its id, its other values after it) and returns its code. A job not held is left as it was:
-- its code is \`again(token, state, t)\` (nil for a settle without one: 0), the code a repeat of
-- this settle answers when the row shows it already ran under that token (its reply was lost and
-- the request sent again), else 0, fenced off. Returns the codes in ARGV order. The caller runs
-- the ids through check_kind before: the kind door's errors come before any write, and act writes.
local function each_held(first, stride, fence, act, again)
  local codes = {}
  for i = first, #ARGV, stride do
    local id, token = ARGV[i], ARGV[i + 1]
    local held, state, t = fence(id, token)
    if held then
      codes[#codes + 1] = act(id, held, i)
    elseif again then
      codes[#codes + 1] = again(token, state, t)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end
-- Count \`g\` once in \`tally\`, {order = {groups in first-seen order}, [g] = count}: settling a
-- batch frees each group's slots in one step (free_slots) instead of one per job.
local function tally(t, g)
  if not g or g == '' then return end
  if not t[g] then
    t[g] = 0
    t.order[#t.order + 1] = g
  end
  t[g] = t[g] + 1
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- The entries of \`entries\` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- The tail every settle shares: free the group slots counted in \`freed\` (tally), then admit the
-- jobs collected in \`batch\` (batch_push; nil when nothing goes back to a lane). Slots first: a
-- lane that gets its job back and a freed slot goes on the ring once. Returns true when either
-- made work claimable; the caller rings the doorbell, once (beat rings once for its reaping and
-- its promotion together, so this does not ring itself).
local function free_and_admit(freed, batch)
  local woke = free_slots(freed)
  if batch and admit(batch) then woke = true end
  return woke
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- A lane's one order over its two parts, from their heads as read: \`z\`, a zset's ZRANGE WITHSCORES
-- (id, score, ...), and \`f\`, its arrivals list's LRANGE, whose members' orders are their rows' \`o\`;
-- the lower order goes first. Takes up to \`count\` ids from both in that order, and returns them,
-- their orders (nil where it is the row's \`o\`: a list member's), and how many of each part it
-- took. pop_lane pops what it took; lane_range pages through it. A row read only for a mix of
-- both parts.
local function merge_lane(z, f, count)
  local ids, orders = {}, {}
  local zi, fi, f_order = 1, 1, nil
  while #ids < count and (zi <= #z or fi <= #f) do
    if fi <= #f and not f_order then f_order = tonumber(redis.call('HGET', job_key(f[fi]), 'o')) or 0 end
    if zi <= #z and (fi > #f or tonumber(z[zi + 1]) < f_order) then
      ids[#ids + 1] = z[zi]
      orders[#ids] = z[zi + 1]
      zi = zi + 2
    else
      ids[#ids + 1] = f[fi]
      fi = fi + 1
      f_order = nil
    end
  end
  return ids, orders, (zi - 1) / 2, fi - 1
end
-- Take the \`count\` first jobs of ring entry g, whose zset holds \`zn\` and arrivals list \`fn\`
-- (count <= zn + fn; either is nil when the caller has not read it: then the zset's size is read
-- if need be, and the list's only if the zset holds any, and fewer than count may come back).
-- The lane's order is one order over both: each list member's order is its row's \`o\`, each zset
-- member's its score; the lower goes first. Returns the ids in that order and their orders; an
-- order is nil where it is the row's \`o\` (a list member), so only a mix of both parts reads rows
-- here; the orders are nil altogether when every job came from the arrivals list.
local function pop_lane(g, count, zn, fn)
  if not zn then zn = redis.call('ZCARD', lane_key(g)) end
  -- the count as text: a Lua number is formatted for Redis on every call it is passed to; from
  -- the arrivals list alone every order is its row's, so there are no orders to hand back
  if zn == 0 then return redis.call('LPOP', fifo_key(g), string.format('%d', count)) or {}, nil end
  local ids, orders = {}, {}
  if not fn then
    fn = redis.call('LLEN', fifo_key(g))
    count = math.min(count, zn + fn)
  end
  if fn == 0 then
    local popped = redis.call('ZPOPMIN', lane_key(g), string.format('%d', count))
    for p = 1, #popped, 2 do
      ids[#ids + 1] = popped[p]
      orders[#ids] = popped[p + 1]
    end
    return ids, orders
  end
  local z = redis.call('ZRANGE', lane_key(g), 0, count - 1, 'WITHSCORES')
  local f = redis.call('LRANGE', fifo_key(g), 0, count - 1)
  local zk, fk
  ids, orders, zk, fk = merge_lane(z, f, count)
  if zk > 0 then redis.call('ZPOPMIN', lane_key(g), zk) end
  if fk > 0 then redis.call('LPOP', fifo_key(g), fk) end
  return ids, orders
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- A stored rate limit, "limit:periodMs", as two numbers; nil for none (nil or false) or anything else.
local function parse_rate(spec)
  local limit, period = string.match(spec or '', '^(%d+):(%d+)$')
  if not limit then return nil end
  return tonumber(limit), tonumber(period)
end
-- The log of \`entry\`'s recent job starts (a zset: member a lease token, score the start's server
-- ms): emq:{q}:starts for the queue's own rate limit, emq:{q}:starts:<g> for group g's.
local function starts_key(entry)
  if entry == QUEUE_ENTRY then return PREFIX .. 'starts' end
  return PREFIX .. 'starts:' .. entry
end
-- How many jobs \`entry\` started within the window of \`period\` ms that ends now: its starts log
-- trimmed to the starts after now - period (a start at s counts until s + period), then counted.
local function rate_used(entry, period, now)
  local key = starts_key(entry)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - period))
  return redis.call('ZCARD', key)
end
-- When \`entry\` may start one more job under its rate limit (\`limit\` starts per \`period\` ms): now
-- when fewer than \`limit\` starts are in the window, else the time enough of them leave it that
-- one more fits (the (used - limit + 1)th oldest start plus the period).
local function rate_due(entry, limit, period, now)
  local used = rate_used(entry, period, now)
  if used < limit then return now end
  local at = redis.call('ZRANGE', starts_key(entry), used - limit, used - limit, 'WITHSCORES')[2]
  return tonumber(at) + period
end
-- Record in \`entry\`'s starts log that the jobs with lease tokens \`tokens\` (numbers) started at
-- \`now\`; the log expires a period after its newest start, when none of it counts any more.
local function log_starts(entry, tokens, period, now)
  if #tokens == 0 then return end
  local key, at, args = starts_key(entry), string.format('%d', now), {}
  for _, t in ipairs(tokens) do
    args[#args + 1] = at
    args[#args + 1] = string.format('%d', t)
  end
  chunked('ZADD', key, args)
  redis.call('PEXPIRE', key, string.format('%d', period))
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- The earliest next slot of any scheduler (ms), or -1 when none will fire: a scheduler that fires
-- no more waits in \`schedulers\` with the score +inf, which Redis answers as "inf". A queue that
-- never made a scheduler (meta \`sc\` unset) has none: nothing is read.
local function first_slot()
  if not queue_meta().sc then return -1 end
  local score = redis.call('ZRANGE', K_SCHEDULERS, 0, 0, 'WITHSCORES')[2]
  if score == nil or score == 'inf' then return -1 end
  return tonumber(score)
end
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then. The throttled entries are read only once
-- any was (meta \`th\`), the waits' timeouts once a step was (meta \`st\`).
-- The earliest timeout of a wait for an event (a wait without one scores +inf): -1 for none.
local function first_timeout()
  local at = tonumber(redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  return at or -1
end
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), queue_meta().th and first_score(K_THROTTLED) or -1,
    queue_meta().st and first_timeout() or -1 }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
-- The schedule bell for a time \`at\` (ms) that was just written (a scheduler's next slot): when it
-- is now the next due time of the queue, push a token onto \`sched\` so a parked consumer re-reads
-- the next due time and sets its timer (a slot already due runs a beat at once).
local function ring_sched_bell_at(at)
  if at >= 0 and next_due() == at then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
-- Throttle \`entry\` (a ring entry, or QUEUE_ENTRY) until \`at\` (ms): into K_THROTTLED at that score,
-- or at its later one if it is there already (a throttled entry is off the ring; the caller takes
-- it off). \`at\` is a due time the scripts know (includes/next_due.lua): when it is the queue's
-- next one the schedule bell rings, so parked consumers set their timers for it. The queue's
-- first throttle sets meta \`th\`, under which the scripts read \`throttled\` at all.
local function throttle(entry, at)
  mark_feature('th')
  redis.call('ZADD', K_THROTTLED, 'GT', string.format('%d', at), entry)
  ring_sched_bell_at(at)
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- The active zset kept in Redis's skiplist encoding. Redis keeps a zset of at most 128 members
-- (zset-max-listpack-entries) as a listpack, where each ZADD or ZREM of a member walks the whole
-- list: a drain that claims and completes 100 jobs a call into a zset of about 100 spent some
-- 24k of its 137k instructions a job there (callgrind; 6k as a skiplist). A member longer than
-- 64 bytes (zset-max-listpack-value) makes the zset a skiplist and keeps it one, so a claim of
-- ACTIVE_SKIPLIST_BATCH jobs or more adds this member, first in its ZADD (a new zset's encoding
-- follows the first member), scored +inf: no lease ever ends there, so the reads by deadline
-- (reap's expired range) never see it, and the reads of the leases go up to, not including, +inf
-- (first_lease, lease_count, the listings). It is not a job id (ids are "JOB:..."); the keyspace
-- checker allows it and nothing else that is not a leased job (docs/design/keyspace.md).
local ACTIVE_SKIPLIST_MEMBER = '~ keeps this zset a skiplist: a listpack zset walks all its members on each ZADD and ZREM ~'
local ACTIVE_SKIPLIST_BATCH = 32
-- The earliest lease deadline (ms), -1 for none.
local function first_lease()
  return tonumber(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]) or -1
end
-- How many jobs are leased.
local function lease_count()
  return redis.call('ZCOUNT', K_ACTIVE, '-inf', '(+inf')
end
-- The leased jobs from the \`offset\`th soonest deadline on, at most \`limit\` (ids and deadlines,
-- flat, as ZRANGE WITHSCORES answers; ids only without \`scores\`).
local function lease_range(offset, limit, scores)
  if scores then
    return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', offset, limit)
  end
  return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'LIMIT', offset, limit)
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- A claimed job as a claim's reply carries it: one string, its fields joined by single spaces and
-- the payload last, "<id> <token> <group> <attempt of this run> <max attempts> <created> <traceparent>
-- <parent> <timeout> <payload>" ('' for a field it lacks: no group, no traceparent, not a flow child), or, for
-- a flow parent or a job with durable steps, { that string, its children hash flat (\`kids\`, false
-- for none: 0 in the reply), its steps hash flat (\`steps\`, absent for none: docs/design/steps.md) }. No field but the
-- payload can hold a space: ids, group and queue names and traceparents are checked for their
-- characters before they are written (src/encode.ts, src/keyspace.ts), and the payload, which
-- may, comes last (src/ops/claim.ts reads it). One string where a table of ten was: Redis writes,
-- and the client reads, one reply element a job instead of eleven.
-- \`token\` and \`attempt\` are text or numbers (a Lua number below 2^53 concatenates in full), the
-- rest text as the row holds it (\`max_attempts\` nil for the default, \`created\` its \`c\`).
local function claimed_job(id, token, group, attempt, max_attempts, created, traceparent, parent, payload, kids, steps, timeout)
  local wire = id .. ' ' .. token .. ' ' .. group .. ' ' .. attempt .. ' ' .. (max_attempts or DEFAULT_MAX_ATTEMPTS)
    .. ' ' .. (created or '') .. ' ' .. (traceparent or '') .. ' ' .. (parent or '') .. ' ' .. (timeout or '') .. ' ' .. payload
  if steps then return { wire, kids or 0, steps } end
  if kids then return { wire, kids } end
  return wire
end
-- Turn hash \`key\` into Redis's hashtable encoding for good: a field written with a value longer
-- than hash-max-listpack-value (64 by default) converts it, and deleting that field does not
-- convert it back (Redis never packs a hash again while it exists), so nothing stays behind for
-- any reader to skip. Redis keeps a hash of up to 128 fields as a listpack, one packed list that
-- every HGET, HMGET field and HSET walks: the groups' limits and active counts of a queue of 100
-- groups, read and written a field per group at every claim and settle, cost a grouped drain 11%
-- of its instructions that way (bench:instructions drain-groups). On a server that packs nothing
-- the two commands change nothing. The field \`~\` is no group name (src/keyspace.ts NAME).
-- Callers convert a hash once it holds HASH_AS_TABLE_FIELDS fields or more: below that a walk of
-- the packed list costs about what a hashtable's lookup does, and a queue of a few groups keeps
-- its small hashes small.
local HASH_AS_TABLE_FIELDS = 16
local HASH_AS_TABLE_VALUE = '~ a value over 64 bytes: writing it makes this hash a hashtable for good ~'
local function hash_as_table(key)
  redis.call('HSET', key, '~', HASH_AS_TABLE_VALUE)
  redis.call('HDEL', key, '~')
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- Rewrite step \`index\` of job \`id\` (its record, JSON: n name, k kind, s state, r result as JSON
-- text, e error, a attempts, st and ft started and finished ms, u until ms, ev event, ei the
-- event's id, cq and ci an invoked child) with \`fields\` set on it (a value false deletes the
-- field). Returns the record as written, nil when the job has no such step. Only the records a
-- suspension or its end rewrite come through here (a sleep's, a wait's, an invoke's): a run
-- step's result is written whole by step.lua, never decoded by a script.
local function step_update(id, index, fields)
  local key = step_key(id)
  local text = redis.call('HGET', key, index)
  if not text then return nil end
  local record = cjson.decode(text)
  for f, v in pairs(fields) do
    if v == false then record[f] = nil else record[f] = v end
  end
  redis.call('HSET', key, index, cjson.encode(record))
  return record
end
-- Claim up to n jobs under a lease of lease_ms from the server time \`now\`, as n turns of the
-- ring: each turn takes the head entry's next job and sends the entry to the back while it is
-- still serviceable, so one busy group cannot starve the others and ungrouped work (the entry
-- UNGROUPED) takes its own turn. A limited group never goes past its limit. The turns are
-- simulated in memory over at most n entries read at once, then the ring is rewritten in two
-- commands (none when its order is unchanged), so a batch costs a few commands per entry instead
-- of per turn.
-- Rate limits (docs/design.md, "Rate limits and holds"): the queue's caps the jobs of the whole
-- claim, a group's its entry's share, at the limit less the starts in the window before now; an
-- entry (or the queue) this claim takes to its limit is throttled until it may start one more, so
-- it is off the ring (and the queue's claims hand out nothing) until a beat readmits it.
-- Each claim increments the row's attempts and takes a lease token from the queue-wide counter
-- meta.fence, written to the row's \`t\`: unique across every life of an id (a removed id enqueued
-- again starts its attempts from 0, but never its tokens), so a stale holder is always fenced.
-- The bare token replaces the mark a settle left there (includes/settled_token.lua): from this
-- claim on, a settle of an earlier lease sent again is fenced off too.
-- The claim also writes the job's order into the row's \`o\` (a job waiting in a zset has it only as
-- its score): a job out of its lane needs it to go back in its place (retry, reap, release,
-- reprocess). The lane's zset and arrivals list are popped as one order (includes/pop_lane.lua).
-- Returns the jobs as a claim's reply carries them (includes/claimed_job.lua) in turn order (what
-- n single claims would hand out, one by one), whether the queue is paused, and the ids and
-- tokens handed out (flat: id, token as text, ...), for a request's record (claim_reply).
-- Collects an \`active\` event (j, g, a) per job in turn order: the caller flushes.
local function claim_jobs(n, lease_ms, now)
  local jobs, held = {}, {}
  -- paused, the queue's rate limit ("limit:periodMs") and how many groups have one: the call's one read of meta
  local meta = queue_meta()
  if meta.paused then return jobs, true, held end
  if n <= 0 then return jobs, false, held end
  local q_limit, q_period, q_used
  q_limit, q_period = parse_rate(meta.rate)
  if q_limit then
    q_used = rate_used(QUEUE_ENTRY, q_period, now)
    if q_used >= q_limit then
      throttle(QUEUE_ENTRY, rate_due(QUEUE_ENTRY, q_limit, q_period, now))
      return jobs, false, held
    end
    n = math.min(n, q_limit - q_used)
  end
  -- one entry more than needed tells whether the fetched entries are the whole ring: a whole ring
  -- whose order the turns leave as it was needs no rewrite (a lone entry claimed one at a time)
  local entries = redis.call('LRANGE', K_RING, 0, n)
  local whole = #entries <= n
  if not whole then entries[#entries] = nil end
  local k = #entries
  if k == 0 then return jobs, false, held end

  local limits, actives, named = {}, {}, {}
  for _, g in ipairs(entries) do
    if g ~= UNGROUPED then named[#named + 1] = g end
  end
  if #named > 0 then
    local l = chunked('HMGET', K_GLIMIT, named)
    local a = chunked('HMGET', K_GACTIVE, named)
    for i, g in ipairs(named) do
      limits[g] = tonumber(l[i])
      actives[g] = tonumber(a[i]) or 0
    end
  end
  -- the groups' rate limits, read only when some group has one: each one's headroom is its limit
  -- less its starts in the window (rates[g] = {limit, period, used})
  local rates = {}
  if #named > 0 and tonumber(meta.grates or '0') > 0 then
    local specs = chunked('HMGET', K_GRATE, named)
    for i, g in ipairs(named) do
      local limit, period = parse_rate(specs[i])
      if limit then
        rates[g] = { limit, period, rate_used(g, period, now) }
      end
    end
  end
  -- whether no entry's zset holds a job (most jobs wait in arrivals lists): one EXISTS for all
  -- (a zset with no member does not exist) spares each entry its zset's size
  local zsets = {}
  for i, g in ipairs(entries) do zsets[i] = lane_key(g) end
  local no_zsets = count_existing(zsets) == 0
  -- what each entry can hand out: its lane's size, within its group's headroom. An entry on the
  -- ring has work and is open (the ring's invariant), so with a headroom of one it hands out one
  -- job, and its arrivals list's length is left for pop_lane to read as it needs it
  local avail, take, queue, zsize, fsize = {}, {}, {}, {}, {}
  for i, g in ipairs(entries) do
    local room = limits[g] and limits[g] - actives[g]
    local rate = rates[g]
    if rate and (not room or rate[1] - rate[3] < room) then room = rate[1] - rate[3] end
    local c
    if no_zsets then zsize[i] = 0 end
    if room and room <= 1 then
      c = math.max(room, 0)
    else
      zsize[i] = zsize[i] or redis.call('ZCARD', lane_key(g))
      fsize[i] = redis.call('LLEN', fifo_key(g))
      c = zsize[i] + fsize[i]
      if room then c = math.min(c, room) end
    end
    avail[i], take[i], queue[i] = c, 0, i
  end

  -- the turns: a whole ring (fewer entries than n) goes round again; a longer one gets one pass
  local head, tail, total = 1, k, 0
  local turns = {} -- the entry of each turn, in turn order: the order the jobs are handed out
  while total < n and head <= tail and (whole or head <= k) do
    local i = queue[head]
    head = head + 1
    if avail[i] > take[i] then
      take[i] = take[i] + 1
      total = total + 1
      turns[total] = i
      if avail[i] > take[i] then
        tail = tail + 1
        queue[tail] = i
      end
    end
  end

  -- the ring afterwards: the fetched prefix replaced by what is still serviceable, in turn order
  local rest, seen, changed = {}, {}, not whole
  for j = head, tail do
    local g = entries[queue[j]]
    if not seen[g] then
      seen[g] = true
      rest[#rest + 1] = g
    end
  end
  if whole and #rest == k then
    for i = 1, k do
      if rest[i] ~= entries[i] then changed = true end
    end
  else
    changed = true
  end
  if changed then
    redis.call('LTRIM', K_RING, k, -1)
    chunked('RPUSH', K_RING, rest)
  end

  -- the fields of each claimed row: a flow's, the steps' and a job's own timeout only in a queue
  -- that ever had them (includes/queue_meta.lua)
  local row_fields = { 'd', 'a', 'm', 'z', 'c', 'x' }
  if meta.fl or meta.st then row_fields[7], row_fields[8] = 'fp', 'fw' end
  if meta.st then row_fields[#row_fields + 1], row_fields[#row_fields + 2] = 'sn', 'sw' end
  if meta.tm then row_fields[#row_fields + 1] = 'to' end
  -- where each optional field is in a row's reply (nil: not asked for, so r[nil] is nil)
  local at = {}
  for i = 7, #row_fields do at[row_fields[i]] = i end
  -- the deadline as text once: a Lua number is formatted for Redis on every call it is passed to
  local deadline = string.format('%d', now + lease_ms)
  -- a big claim keeps the active zset a skiplist (includes/active_skiplist.lua)
  local leases = total >= ACTIVE_SKIPLIST_BATCH and { '+inf', ACTIVE_SKIPLIST_MEMBER } or {}
  local token = 0
  if total > 0 then token = redis.call('HINCRBY', K_META, 'fence', total) - total end
  -- the jobs as the reply carries them, their ids and this run's attempts, entry by entry in pop
  -- order: an entry's are \`made_count[i]\` of them from \`made_first[i]\` on (flat arrays, not three
  -- tables an entry: a grouped claim takes one job from each of dozens of entries)
  local made, made_ids, made_runs, made_first, made_count = {}, {}, {}, {}, {}
  -- the groups' new active counts, written in one HSET (their old ones were read above)
  local counts = {}
  -- the tokens handed out, for the queue's starts log when it has a rate limit
  local started = {}
  for i, g in ipairs(entries) do
    local rate = rates[g]
    -- the tokens handed out for this entry, for its starts log: only an entry with a rate limit keeps one
    local tokens = rate and {} or nil
    if take[i] > 0 then
      local ids, orders = pop_lane(g, take[i], zsize[i], fsize[i])
      made_first[i], made_count[i] = #made + 1, #ids
      local group = g ~= UNGROUPED and g or ''
      if g ~= UNGROUPED and #ids > 0 then
        counts[#counts + 1] = g
        counts[#counts + 1] = string.format('%d', actives[g] + #ids)
      end
      for p, id in ipairs(ids) do
        local key = job_key(id)
        -- a flow's fields only in a queue that ever had a flow job (includes/queue_meta.lua)
        local r = redis.call('HMGET', key, unpack(row_fields))
        local attempts = (tonumber(r[2]) or 0) + 1
        token = token + 1
        if tokens then tokens[#tokens + 1] = token end
        if q_limit then started[#started + 1] = token end
        -- the numbers as text (see the deadline above); a job from the arrivals list has its order
        -- in its row already (orders[p] is nil)
        local a_text, t_text = string.format('%d', attempts), string.format('%d', token)
        local order = orders and orders[p]
        if order then
          redis.call('HSET', key, 's', 'active', 'a', a_text, 't', t_text, 'o', order)
        else
          redis.call('HSET', key, 's', 'active', 'a', a_text, 't', t_text)
        end
        leases[#leases + 1] = deadline
        leases[#leases + 1] = id
        held[#held + 1] = id
        held[#held + 1] = t_text
        -- a flow parent's children (docs/design.md, "Flows") go with it: its hash is in this slot
        local kids = false
        if r[at.fw] then kids = redis.call('HGETALL', kids_key(id)) end
        -- a job's durable steps (docs/design/steps.md) go with it too; an invoke it waited on is
        -- over once it is claimed (its parent was released: its child finished)
        local steps = false
        if r[at.sn] then
          local sw = r[at.sw]
          if sw and string.sub(sw, 1, 1) == 'i' then
            step_update(id, string.sub(sw, 2), { s = 'done', ft = now })
            redis.call('HDEL', key, 'sw')
          end
          steps = redis.call('HGETALL', step_key(id))
        end
        -- this run's attempt: the claims less those given back unstarted (\`z\`, rarely there); as
        -- text when it is the claim count's (a Lua number is formatted as a float where it is
        -- written into the reply and the \`active\` event)
        local run = r[4] and attempts - tonumber(r[4]) or a_text
        made_ids[#made_ids + 1] = id
        made_runs[#made_runs + 1] = run
        made[#made + 1] = claimed_job(id, t_text, group, run, r[3], r[5], r[6], r[at.fp], r[1], kids, steps, r[at.to])
      end
    end
    -- a group at its rate limit now (or already: nothing else takes it off the ring for it) is
    -- throttled until one more start fits in its window; the rewrite above took it off the ring
    if rate then
      log_starts(g, tokens, rate[2], now)
      if rate[3] + #tokens >= rate[1] then
        throttle(g, rate_due(g, rate[1], rate[2], now))
        redis.call('HINCRBY', K_META, 'rated', 1)
      end
    end
  end
  if q_limit then
    log_starts(QUEUE_ENTRY, started, q_period, now)
    if q_used + #started >= q_limit then
      throttle(QUEUE_ENTRY, rate_due(QUEUE_ENTRY, q_limit, q_period, now))
      redis.call('HINCRBY', K_META, 'rated', 1)
    end
  end
  -- handed out in turn order, as n single claims would: a consumer runs a batch in this order, so
  -- one entry's jobs listed together would run ahead of the other entries' turns
  local next_of = {}
  for _, i in ipairs(turns) do
    local c = (next_of[i] or 0) + 1
    next_of[i] = c
    if c <= (made_count[i] or 0) then
      local at = made_first[i] + c - 1
      jobs[#jobs + 1] = made[at]
      local g = entries[i]
      collect_event('active', made_ids[at], 'g', g ~= UNGROUPED and g or nil, 'a', made_runs[at])
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  -- a claim that counts many groups' jobs keeps their counts in a hashtable (includes/hash_as_table.lua):
  -- the hash is deleted each time its last count reaches 0, and made again packed
  if #counts >= 2 * HASH_AS_TABLE_FIELDS then hash_as_table(K_GACTIVE) end
  chunked('ZADD', K_ACTIVE, leases)
  return jobs, false, held
end
-- When the queue runs dry a consumer parks until the next thing that can make work claimable:
-- the next due time (a scheduled job or a scheduler's slot) and the earliest lease deadline (-1
-- for none).
local function next_times()
  return next_due(), first_lease()
end
-- A claim sent again (its reply was lost and the client repeated the request): the jobs the first
-- claim handed out, from its record \`seen\` (a JSON list id, token, id, token, ...), each still
-- held under that token, in claim_reply's shape. A job whose lease has lapsed or been settled
-- since is left out (its holder is fenced anyway). The lease of each job answered is renewed to
-- now + lease_ms, the deadline its holder reckons from this reply. The reply carries the next times.
local function replay_claim(seen, now, lease_ms)
  local held = cjson.decode(seen)
  local reply = { {} }
  for i = 1, #held, 2 do
    local id, token = held[i], held[i + 1]
    local r = redis.call('HMGET', job_key(id), 's', 't', 'd', 'g', 'a', 'z', 'm', 'c', 'x', 'fp', 'fw', 'sn', 'to')
    if r[1] == 'active' and r[2] == token then
      local runs = (tonumber(r[5]) or 0) - (tonumber(r[6]) or 0)
      local kids = false
      if r[11] then kids = redis.call('HGETALL', kids_key(id)) end
      local steps = r[12] and redis.call('HGETALL', step_key(id)) or false
      reply[#reply + 1] = claimed_job(id, token, r[4] or '', runs, r[7], r[8], r[9], r[10], r[3], kids, steps, r[13])
      redis.call('ZADD', K_ACTIVE, 'XX', now + lease_ms, id)
    end
  end
  local due_at, next_lease = next_times()
  reply[1] = { now, queue_meta().paused and 1 or 0, due_at, next_lease, 0, 0, 0 }
  return reply
end
-- The reply shared by claim, beat and complete-and-claim:
-- { {now, paused 0|1, next due time, next lease deadline, promoted, requeued, buried}, job, ... }
-- where each job is one string (includes/claimed_job.lua). When fewer than n jobs were claimed (n = 0 included), the
-- caller is about to park (or re-arm its timers): the reply carries the next times (-1 for none)
-- and the schedule bell is emptied, its news being in the reply. A claim that asked for n > 0 and
-- got fewer also empties the doorbell: nothing is claimable at this instant, so every token is
-- stale. Whatever is pushed after this atomic step is news, so no wake-up is ever lost.
-- A claim that got all n carries the next times too when the schedule bell holds a token (a job
-- became the earliest scheduled while no consumer was parked to hear it: a busy consumer arms its
-- timer from the reply), taking the token, or always with \`times\` (a beat); -1 otherwise.
-- With \`request_key\` (not ""), the claim is recorded under emq:{q}:req:<key> for its lease, so the
-- same request sent again (its reply lost) answers the same jobs instead of handing out others
-- and leaving these to lapse (includes/replay_claim.lua).
local function claim_reply(n, lease_ms, now, promoted, requeued, buried, times, request_key)
  local record = nil
  if request_key ~= nil and request_key ~= '' and n > 0 then
    record = PREFIX .. 'req:' .. request_key
    local seen = redis.call('GET', record)
    if seen then return replay_claim(seen, now, lease_ms) end
  end
  local jobs, paused, held = claim_jobs(n, lease_ms, now)
  if record and #jobs > 0 then
    redis.call('SET', record, cjson.encode(held), 'PX', string.format('%d', lease_ms))
  end
  local due_at, next_lease = -1, -1
  if #jobs < n or n == 0 then
    due_at, next_lease = next_times()
    if n > 0 then
      redis.call('DEL', K_WAKE, K_SCHED)
    else
      redis.call('DEL', K_SCHED)
    end
  elseif redis.call('DEL', K_SCHED) == 1 or times then
    due_at, next_lease = next_times()
  end
  local reply = { { now, paused and 1 or 0, due_at, next_lease, promoted, requeued, buried } }
  for _, job in ipairs(jobs) do reply[#reply + 1] = job end
  return reply
end
-- Index the rows \`ids\` just completed at \`now\` (\`now_text\` its text) in K_COMPLETED, score = when,
-- so getJobs, clean and obliterate find them; then drop the entries older than \`keep_ms\` (when it
-- is above 0), at most 1000 a call: their rows have expired by their own TTL, and a backlog (the
-- retention just shortened) goes over several calls instead of blocking one. keep_ms 0 keeps no
-- row and indexes nothing. One ZADD for the batch, one ZCOUNT, and a ZREMRANGEBYRANK when stale.
local function index_completed(ids, now, now_text, keep_ms)
  if keep_ms == 0 or #ids == 0 then return end
  local scored = {}
  for _, id in ipairs(ids) do
    scored[#scored + 1] = now_text
    scored[#scored + 1] = id
  end
  chunked('ZADD', K_COMPLETED, scored)
  if keep_ms < 0 then return end
  -- strictly older: a row completed exactly keep_ms ago is still readable this millisecond (Redis
  -- expires a key once its time has passed), so its entry stays until the next
  local stale = redis.call('ZCOUNT', K_COMPLETED, '-inf', string.format('(%d', now - keep_ms))
  if stale > 0 then redis.call('ZREMRANGEBYRANK', K_COMPLETED, 0, math.min(stale, 1000) - 1) end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Collect the \`completed\` event of job \`id\` (group nil for none, this run's attempt) with
-- its result, JSON text or nil for none: carried as \`r\` when it is at most the queue's \`erb\`
-- bytes, else left out and \`rt\` = '1' set (a reader gets it from the row).
local function collect_completed(id, group, attempt, result)
  local r, rt = result, nil
  if result then
    local _, limit = events_settings()
    if #result > limit then r, rt = nil, '1' end
  end
  collect_event('completed', id, 'g', group, 'a', attempt, 'r', r, 'rt', rt)
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- A job that held deduplication key \`k\` (its row's \`dk\`; nil or false: none) in until-finished
-- mode (no \`dt\`, the row's ttl) has finished: completed or dead. The key is released, so the next
-- enqueue with it adds a job; \`forget\` (a dead job's row stays) also takes \`dk\` off the row, so a
-- reprocessed job does not claim a key it no longer holds. A ttl key is left to expire.
local function release_settled(id, k, ttl, forget)
  if not k or ttl then return end
  release_dedupe(id, k)
  if forget then redis.call('HDEL', job_key(id), 'dk') end
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- Count \`n\` (>= 1) jobs of kind \`kind\` ('c' completed, 'd' sent to dead) in the minute of \`now\`
-- (the script's server ms) in K_MINUTES, field \`<kind><minute>\`, minute = floor(now / 60000):
-- the per-minute buckets of the last hour counts.lua reads (docs/design.md, "Keyspace"). One
-- HINCRBY a call; only the first write of its kind in a minute (HINCRBY answers n: the field was
-- new) also drops the fields more than 60 minutes older than this one (HKEYS over at most 122
-- fields, one HDEL) and sets the key to expire 61 minutes after this minute starts, a minute after
-- its newest field has left every reader's hour: so a queue gone idle leaves no key behind. At
-- most three commands more per kind and minute: amortised, one command a call.
local function count_minute(kind, n, now)
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', K_MINUTES, kind .. string.format('%d', minute), n) ~= n then return end
  local oldest, old = minute - 60, {}
  for _, field in ipairs(redis.call('HKEYS', K_MINUTES)) do
    local m = tonumber(string.sub(field, 2))
    if not m or m < oldest then old[#old + 1] = field end
  end
  if #old > 0 then redis.call('HDEL', K_MINUTES, unpack(old)) end
  redis.call('PEXPIREAT', K_MINUTES, string.format('%d', (minute + 61) * 60000))
end

local keep_ms = arg_int(ARGV[2], 'keepMs', -1)
local claim_n = arg_int(ARGV[3], 'claimN', 0)
local lease_ms = arg_int(ARGV[4], 'leaseMs', 1)
for i = 6, #ARGV, 3 do check_kind(ARGV[i]) end

local now = now_ms()
-- as text once: a Lua number passed to Redis is formatted on every call. A kept row expires at
-- now + keepMs exactly (PEXPIREAT, not PEXPIRE: Redis would count a relative TTL from the moment
-- each PEXPIRE runs, up to the script's length later), the instant index_completed's trim goes by
local now_text, expire_text = string.format('%d', now), string.format('%d', now + keep_ms)
local done, freed = {}, { order = {} }
local codes = each_held(6, 3, held_run, function(id, run, i)
  local group, result = run[1], ARGV[i + 2]
  done[#done + 1] = id
  tally(freed, group)
  collect_completed(id, group, run[2], result ~= '' and result or nil)
  release_settled(id, run[3], run[4], false)
  if run[5] then report_up(id, run[5], ARGV[i + 1], 'c', result, now) end
  local key = job_key(id)
  if keep_ms == 0 then
    redis.call('DEL', key)
  else
    if result == '' then
      redis.call('HSET', key, 's', 'completed', 'f', now_text)
    else
      redis.call('HSET', key, 's', 'completed', 'f', now_text, 'r', result)
    end
    if keep_ms > 0 then redis.call('PEXPIREAT', key, expire_text) end
  end
  return 1
end, function(token, state, t)
  if state == 'completed' and t == token then return 1 end
  return 0
end)
if #done > 0 then
  chunked('ZREM', K_ACTIVE, done)
  redis.call('HINCRBY', K_META, 'completed', #done)
  count_minute('c', #done, now)
  index_completed(done, now, now_text, keep_ms)
end
if free_and_admit(freed) then ring_doorbell() end
local claimed = {}
if claim_n > 0 then claimed = claim_reply(claim_n, lease_ms, now, 0, 0, 0, false, ARGV[5]) end
flush_events()
return { codes, claimed, outbox_written }
`,
  },
  counts: {
    name: "counts",
    sha1: "6dbb3c99f285c7b77aed38f1971d14785f3be16a",
    lua: `--[[
  counts: how many jobs are in each state, and whether the queue is paused.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Derives  emq:{q}:lane:<group> and emq:{q}:fifo:<group> for every group that ever had a lane,
           emq:{q}:fifo, and emq:{q}:minutes
  Reply    {pending (ungrouped and every lane), scheduled, active, dead, completed (a counter),
           paused 0|1, buried (a counter: jobs ever sent to dead), retried (a counter: failed
           attempts sent to run again), stalled (a counter: leases reaped), fired (a counter: scheduler
           slots fired), rated (a counter: times a group or the queue reached its rate limit and was
           throttled), waiting (flow parents waiting for their children), minute (the server's
           current minute, floor(ms / 60000)), {the per-minute buckets, flat: field, count, ...}}:
           fields c<minute> (jobs completed in it) and d<minute> (jobs sent to dead), as
           includes/count_minute.lua writes them; the reader keeps the 60 minutes ending with the
           current one (the key of a queue idle for a while may still hold older ones, until its
           next count trims them or the key expires), awaiting (jobs waiting for an event), sleeping
           (scheduled jobs in a durable sleep: docs/design/steps.md)}
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- How many claimable jobs ring entry g holds: its zset's and its arrivals list's, in that order.
local function lane_size(g)
  return redis.call('ZCARD', lane_key(g)), redis.call('LLEN', fifo_key(g))
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The active zset kept in Redis's skiplist encoding. Redis keeps a zset of at most 128 members
-- (zset-max-listpack-entries) as a listpack, where each ZADD or ZREM of a member walks the whole
-- list: a drain that claims and completes 100 jobs a call into a zset of about 100 spent some
-- 24k of its 137k instructions a job there (callgrind; 6k as a skiplist). A member longer than
-- 64 bytes (zset-max-listpack-value) makes the zset a skiplist and keeps it one, so a claim of
-- ACTIVE_SKIPLIST_BATCH jobs or more adds this member, first in its ZADD (a new zset's encoding
-- follows the first member), scored +inf: no lease ever ends there, so the reads by deadline
-- (reap's expired range) never see it, and the reads of the leases go up to, not including, +inf
-- (first_lease, lease_count, the listings). It is not a job id (ids are "JOB:..."); the keyspace
-- checker allows it and nothing else that is not a leased job (docs/design/keyspace.md).
local ACTIVE_SKIPLIST_MEMBER = '~ keeps this zset a skiplist: a listpack zset walks all its members on each ZADD and ZREM ~'
local ACTIVE_SKIPLIST_BATCH = 32
-- The earliest lease deadline (ms), -1 for none.
local function first_lease()
  return tonumber(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]) or -1
end
-- How many jobs are leased.
local function lease_count()
  return redis.call('ZCOUNT', K_ACTIVE, '-inf', '(+inf')
end
-- The leased jobs from the \`offset\`th soonest deadline on, at most \`limit\` (ids and deadlines,
-- flat, as ZRANGE WITHSCORES answers; ids only without \`scores\`).
local function lease_range(offset, limit, scores)
  if scores then
    return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', offset, limit)
  end
  return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'LIMIT', offset, limit)
end

local pending = 0
local entries = redis.call('SMEMBERS', K_GROUPS)
entries[#entries + 1] = UNGROUPED
for _, g in ipairs(entries) do
  local z, f = lane_size(g)
  pending = pending + z + f
end
return {
  pending,
  redis.call('ZCARD', K_SCHEDULED),
  lease_count(),
  redis.call('ZCARD', K_DEAD),
  tonumber(redis.call('HGET', K_META, 'completed') or '0'),
  redis.call('HEXISTS', K_META, 'paused'),
  tonumber(redis.call('HGET', K_META, 'buried') or '0'),
  tonumber(redis.call('HGET', K_META, 'retried') or '0'),
  tonumber(redis.call('HGET', K_META, 'stalled') or '0'),
  tonumber(redis.call('HGET', K_META, 'fired') or '0'),
  tonumber(redis.call('HGET', K_META, 'rated') or '0'),
  redis.call('ZCARD', K_WAITING),
  math.floor(now_ms() / 60000),
  redis.call('HGETALL', K_MINUTES),
  redis.call('ZCARD', PREFIX .. 'awaiting'),
  redis.call('ZCARD', PREFIX .. 'sleeping'),
}
`,
  },
  deadRetention: {
    name: "deadRetention",
    sha1: "daf2e4a33a97d25af1c92222a1b9d18386e5f875",
    lua: `--[[
  dead-retention: the queue's retention of dead jobs (see set-dead-retention).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    {maxAgeMs or -1, maxCount or -1}
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'

local r = redis.call('HMGET', K_META, 'dage', 'dmax')
return { tonumber(r[1] or '-1'), tonumber(r[2] or '-1') }
`,
  },
  drain: {
    name: "drain",
    sha1: "b97b6a82d31a84a092f924382f5e483bf7af375f",
    lua: `--[[
  drain: delete waiting jobs, rows and all: pending (every lane) and scheduled, never active
  ones, at most n rows a call: one chunk of Queue.drain, which calls again with the cursor this
  call answers until it answers "done". Lanes go first, ungrouped work then each group (SSCAN over
  emq:{q}:groups, the cursor carried from call to call), then scheduled. A lane emptied leaves the
  ring; group counts, limits, paused flags and the groups set stay (they describe the groups, not
  their waiting jobs), and nothing rings: nothing became claimable. A job enqueued while a drain
  runs may be drained or kept, as it lands before or behind the cursor.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  n (>= 1): the most rows this call deletes; it also stops scanning groups once it has
           visited n (between two SSCAN batches, so a batch is never left half visited)
  ARGV[3]  cursor: "" to start, else what the previous call answered
  ARGV[4]  request key ("" = none): the same key again answers this call's reply and deletes
           nothing more (a reply lost and the call sent again)
  ARGV[5]  how long the request key is remembered, ms (>= 1 with a key)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>
  Reply    {deleted, cursor, {flow news}}: cursor "done" when nothing waiting is left to visit;
           the flow news (outbox entries: a flow child drained tells its parent) for the caller
           to relay
  Events   \`drained\` (n: the rows deleted) when it deleted any; a repeat answered from the request
           key appends nothing
  Dedupe   each row deleted releases its dedupe key while it names the job (includes/delete_rows.lua)
  Errors   EMQARG (a malformed number or cursor), before anything is written
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- A row with durable steps (its \`sn\`) about to be deleted takes its steps with it
-- (docs/design/steps.md): its steps hash, its place among the sleepers and the jobs awaiting an
-- event, and among its wait's waiters (\`wk\`, the row's, nil when it waits for none).
local function forget_steps(id, wk)
  redis.call('DEL', step_key(id))
  redis.call('ZREM', PREFIX .. 'sleeping', id)
  redis.call('ZREM', PREFIX .. 'awaiting', id)
  if wk then redis.call('ZREM', wk, id) end
end
-- Delete the rows of jobs \`ids\`, one DEL per 1000 (Lua's unpack has a limit), releasing each
-- one's dedupe key (\`dk\`, either mode) while it still names the job. Only in a queue where a job
-- ever took a key (meta \`dd\`, asked once a call) is each row's \`dk\` read: a queue that never used
-- deduplication pays one HMGET a call, not a command a row. Likewise in a queue where a job of a
-- flow was ever written (meta \`fl\`), each row's links are read and settled (forget_flow: a child
-- tells its parent, a parent has its unfinished children removed, through the outbox), and in a
-- queue where a step was ever recorded (meta \`st\`), each row's steps go with it (forget_steps).
local dedupe_used, flows_used, steps_used = nil, nil, nil
local function delete_rows(ids)
  if #ids == 0 then return end
  if dedupe_used == nil then
    local m = redis.call('HMGET', K_META, 'dd', 'fl', 'st')
    dedupe_used, flows_used, steps_used = m[1] ~= false, m[2] ~= false, m[3] ~= false
  end
  local keys = {}
  local now = flows_used and now_ms() or 0
  for i, id in ipairs(ids) do
    keys[i] = job_key(id)
    if flows_used then
      local r = redis.call('HMGET', keys[i], 'dk', 's', 'fp', 'fw', 't')
      release_dedupe(id, r[1])
      if r[3] or r[4] then forget_flow(id, r[2], r[3], r[4], r[5], now) end
    elseif dedupe_used then
      release_dedupe(id, redis.call('HGET', keys[i], 'dk'))
    end
    if steps_used then
      local s = redis.call('HMGET', keys[i], 'sn', 'wk')
      if s[1] then forget_steps(id, s[2]) end
    end
  end
  for i = 1, #keys, 1000 do redis.call('DEL', unpack(keys, i, math.min(i + 999, #keys))) end
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- Ring entry g may have stopped being serviceable (its lane emptied, it was paused, its limit
-- was lowered): take it off the ring if so.
local function leave_ring(g)
  if not lane_serviceable(g) then redis.call('LREM', K_RING, 0, g) end
end
-- Delete up to \`budget\` of ring entry g's claimable jobs, rows and all (its zset's first, then its
-- arrivals list's), and take the entry off the ring when that emptied its lane. Returns how many
-- went.
local function drop_lane(g, budget)
  if budget <= 0 then return 0 end
  local ids = {}
  local popped = redis.call('ZPOPMIN', lane_key(g), string.format('%d', budget))
  for p = 1, #popped, 2 do ids[#ids + 1] = popped[p] end
  if #ids < budget then
    for _, id in ipairs(redis.call('LPOP', fifo_key(g), string.format('%d', budget - #ids)) or {}) do ids[#ids + 1] = id end
  end
  if #ids == 0 then return 0 end
  delete_rows(ids)
  leave_ring(g)
  return #ids
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- What a bulk admin call answered when it ran before under request key \`key\` (not ""): its reply
-- was lost and the same call sent again, so it answers the same and writes nothing. nil when the
-- key is "" or unseen. The record is emq:{q}:req:<key>, written by record_reply.
local function recorded_reply(key)
  if key == '' then return nil end
  local seen = redis.call('GET', PREFIX .. 'req:' .. key)
  if seen then return cjson.decode(seen) end
  return nil
end
-- Remember \`reply\` under request key \`key\` for \`ttl\` ms (nothing for key ""), so the same call sent
-- again answers it (recorded_reply); returns \`reply\`. A reply is numbers and strings in nested
-- lists, which cjson carries both ways (an empty list comes back as an empty list).
local function record_reply(key, ttl, reply)
  if key ~= '' then redis.call('SET', PREFIX .. 'req:' .. key, cjson.encode(reply), 'PX', ttl) end
  return reply
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end

local n = arg_int(ARGV[2], 'n', 1)
local cursor = ARGV[3]
if not (cursor == '' or cursor == 's' or string.match(cursor, '^g%d+$')) then
  error(redis.error_reply('EMQARG not a drain cursor: ' .. tostring(cursor)))
end
local request = ARGV[4]
local ttl = 0
if request ~= '' then ttl = arg_int(ARGV[5], 'requestTtlMs', 1) end
local seen = recorded_reply(request)
if seen then return seen end

local budget, visits, deleted = n, n, 0
local function reply(next_cursor)
  if deleted > 0 then emit('drained', nil, 'n', string.format('%d', deleted)) end
  return record_reply(request, ttl, { deleted, next_cursor, outbox_written })
end

if cursor == '' then
  local went = drop_lane(UNGROUPED, budget)
  deleted, budget = deleted + went, budget - went
  if budget == 0 then return reply('') end
  cursor = 'g0'
end

while string.sub(cursor, 1, 1) == 'g' do
  local at = string.sub(cursor, 2)
  local scan = redis.call('SSCAN', K_GROUPS, at, 'COUNT', 100)
  for _, g in ipairs(scan[2]) do
    local went = drop_lane(g, budget)
    deleted, budget, visits = deleted + went, budget - went, visits - 1
    -- out of rows within this batch: the next call scans it again (an emptied lane costs two
    -- commands and no row, so it always gets further)
    if budget == 0 then return reply(cursor) end
  end
  if scan[1] == '0' then cursor = 's' else cursor = 'g' .. scan[1] end
  if visits <= 0 and cursor ~= 's' then return reply(cursor) end
end

local ids = redis.call('ZRANGE', K_SCHEDULED, 0, budget - 1)
delete_rows(ids)
chunked('ZREM', K_SCHEDULED, ids)
deleted = deleted + #ids
if #ids == budget and redis.call('EXISTS', K_SCHEDULED) == 1 then return reply('s') end
return reply('done')
`,
  },
  enqueue: {
    name: "enqueue",
    sha1: "ec5f659f2fedd39daac820d08bd961c7227b7daf",
    lua: `--[[
  enqueue: add jobs, ungrouped or into a group's lane, claimable now or due later; idempotent by id.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  request key ("" = none): the same key again answers what this call answered and writes
           nothing, so a request that runs twice (a lost reply, a client's retry) is one enqueue
  ARGV[3]  how long the request key is remembered, ms (>= 1 with a key)
  ARGV[4]  "1": the key is a caller's (Idempotency-Key), so a repeat must carry the same jobs;
           "0": a key the core made for this one call
  ARGV[5]  the W3C traceparent of the enqueue's span ("" = none), written to each new row's \`x\`
           (docs/design.md, "The row"); not part of a caller's key's fingerprint, so a retry
           under another span is the same request
  ARGV[6]  n, the number of jobs (>= 1)
  ARGV[7]  the jobs' form: "p" (plain) gives each job as 2 values, its payload (JSON text) and
           group ("" = ungrouped); "l" (linked) as 5, its id, payload, group, parent and children
           (a flow's jobs); every other field the default below; "f" (full) as all 14 below
           (a call of plain jobs, the usual bulk add, sends 2 arguments a job instead of 13: each
           argument is parsed, made a Lua string and freed by Redis, and written by the client)
  then, "f", 14 values per job:
           id ("" = a fresh "JOB:<seq>", in a partition "JOB:<seq>~<i>"), payload (JSON text), group ("" = ungrouped),
           delayMs (-1 = none), runAt (epoch ms, -1 = none), priority (lower runs first),
           maxAttempts (>= 1), backoff spec ("<f|e>,<delayMs>,<capMs>,<jitter>"),
           dedupe key ("" = none; 1 to 1024 bytes, never with an id), dedupe ttlMs (-1 = until
           the job finishes, else >= 1), replace ("1": debounce, "0"), parent (a flow child's
           "<queue>|<id>|<policy f|i|r>", "" none), children (a flow parent's "<queue>|<id>"
           joined by ",", "" none), timeoutMs (-1 = the consumer's; else >= 1: the job's own,
           the row's \`to\`, handed out with each claim)
  Derives  emq:{q}:job:<id> (the row), emq:{q}:lane:<group>, emq:{q}:fifo[:<group>],
           emq:{q}:req:<request key> (the first answer, with a sha1 of the jobs for a caller's key;
           a core key's answer of generated ids only as "#<first seq>,<n>,<states>"),
           emq:{q}:dd:<dedupe key> (the id of the job holding it; PX its ttlMs in ttl mode),
           emq:{q}:minutes (a flow parent whose child already failed dies: includes/bury.lua)
  Row      \`m\` and \`b\` only when they differ from the scripts' defaults (includes/job_defaults.lua);
           the order \`o\` on a scheduled row and on a job in an arrivals list; a job with a
           priority waits in its lane's zset with its order as its score (claim writes it into
           the row); \`x\` (the traceparent) only when ARGV[5] gives one; \`dk\` the dedupe key and
           \`dt\` its ttlMs (ttl mode) when the job took one
  Dedupe   a job whose dedupe key names a job (docs/design.md, "Deduplication") writes nothing and
           answers "duplicate" with that job's id; with replace, a job of the key not yet started
           takes its payload and due time instead (includes/replace_job.lua) and it answers
           "replaced". A key taken by an earlier job of the same call is seen as a later call
           would see it: the jobs collected so far are placed first. meta \`dd\` = 1 once any job
           took a key (written before its row), so the claims, the settles and the bulk deletes
           read \`dk\` only where it may be
  Flows    a job with children is a flow parent (includes/add_parent.lua): state \`waiting\`, in
           emq:{q}:waiting, its children in emq:{q}:kids:<id>; a job with a parent keeps it as \`fp\`.
           meta \`fl\` = 1 once any job of a flow was written here, before its row: the claims,
           settles and bulk deletes read the links only then (docs/design.md, "Flows")
  Ids      a generated id is "JOB:<seq>": a batch of generated ids alone is known new without an
           EXISTS while meta \`ng\` holds (includes/take_seq.lua); a caller's id "JOB:<n>" with n
           past the sequence takes \`ng\` away, before its row is written
  Reply    flat {id, state, id, state, ...} with state "pending" | "scheduled" | "duplicate" |
           "replaced", and for a flow parent "waiting" (or "pending" or "dead" when its children
           had all finished, or one had failed it, before it was written); a duplicate writes nothing; a known request key answers its first reply again
  Events   \`added\` (j, g) or \`scheduled\` (j, g, d: its due time) per new job (\`waiting\` (j, g, n: its
           children) for a flow parent, and \`released\` or \`dead\` after it when due), \`replaced\` (j, g, and
           d when scheduled) per job replaced, in ARGV order, in one entry; a duplicate or a
           request answered again appends nothing
  Errors   EMQKIND (a given id is not "JOB:..."), EMQARG (a malformed number, traceparent or dedupe
           key, a dedupe key with an id, a malformed flow parent or child, a flow parent without an
           id or with a due time), EMQCONFLICT (a caller's request key seen with other
           jobs); all raised before anything is written
  Rings    the doorbell once when any new or replaced job is claimable now; the schedule bell when a
           new or replaced job is the earliest scheduled one
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- Whether every id of a batch names a new job: no id repeats within the batch and none of their
-- rows exists, asked with one EXISTS for the batch instead of one per id. \`ids\` holds each id to
-- be written, a generated one included. Returns true and the ids' row keys in order, or false:
-- that says nothing about any one id, and the caller checks each.
local function all_new(ids)
  local keys, seen = {}, {}
  for i, id in ipairs(ids) do
    if seen[id] then return false end
    seen[id] = true
    keys[i] = job_key(id)
  end
  if count_existing(keys) > 0 then return false end
  return true, keys
end
-- A generated job id: "JOB:<seq>", and in a partition of a partitioned queue (named "q~i")
-- "JOB:<seq>~<i>", so generated ids stay unique across the partitions and name their partition
-- (no caller's id holds a \`~\`: docs/design.md, "Partitioned queues").
-- A plain find first: the pattern match on every call of every script that includes this cost a
-- single add 11k of its instructions (callgrind), and only a partition's prefix has a \`~\`.
local FRESH_ID_SUFFIX = string.find(PREFIX, '~', 1, true) and string.match(PREFIX, '(~%d+)}:$') or ''
local function fresh_id(seq)
  return 'JOB:' .. string.format('%d', seq) .. FRESH_ID_SUFFIX
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Takes \`n\` arrival sequence numbers (meta \`seq\`) and answers the one before the first of them.
-- A queue's very first numbers also set meta \`ng\`: "every generated id is new". A generated id is
-- \`JOB:<seq>\`, and while no caller has given an id of that form numbered above \`seq\`, no row
-- can hold the next one: an enqueue of generated ids alone then asks for no EXISTS (enqueue.lua).
-- A caller's id \`JOB:<n>\` with n above \`seq\` takes the flag away for good (before its row is
-- written), and so does this queue's age: a queue whose \`seq\` predates the flag never gets it.
local function take_seq(n)
  local last = redis.call('HINCRBY', K_META, 'seq', n)
  if last == n then
    redis.call('HSET', K_META, 'ng', '1')
    queue_meta().ng = true
  end
  return last - n
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- A new row's fields that it has only when they differ from the defaults: \`m\` max attempts, \`b\`
-- the backoff spec (both text, as enqueue takes them), \`p\` the priority (a number, > 0), \`x\` the
-- traceparent (nil for none), \`fp\` a flow child's parent (nil for none), as a flat field-value
-- list, or nil when it has none (the usual row: write_row then passes its fields as arguments).
local function rare_fields(max_attempts, backoff, priority, traceparent, parent)
  local rare = nil
  if tonumber(max_attempts) ~= DEFAULT_MAX_ATTEMPTS then rare = { 'm', max_attempts } end
  if backoff ~= DEFAULT_BACKOFF then
    rare = rare or {}
    rare[#rare + 1] = 'b'
    rare[#rare + 1] = backoff
  end
  if priority > 0 then
    rare = rare or {}
    rare[#rare + 1] = 'p'
    rare[#rare + 1] = string.format('%d', priority)
  end
  if traceparent then
    rare = rare or {}
    rare[#rare + 1] = 'x'
    rare[#rare + 1] = traceparent
  end
  if parent then
    rare = rare or {}
    rare[#rare + 1] = 'fp'
    rare[#rare + 1] = parent
  end
  return rare
end
-- Write a new job's row: its state, payload, attempts ('0') and created time, then its order \`o\`
-- and group \`g\` when it has them (order nil, group ''), then \`rare\`: nil, or a list of the
-- field-value pairs a row has only when they differ from the defaults (a priority among them).
-- The usual shape, a row with its order and no rare field, goes to HSET as arguments: a table
-- made for each row and unpacked costs about as much again as the HSET (~0.7 us a row, Redis 7).
local function write_row(key, state, payload, created, order, group, rare)
  if order and not rare then
    if group == '' then
      return redis.call('HSET', key, 's', state, 'd', payload, 'a', '0', 'c', created, 'o', order)
    end
    return redis.call('HSET', key, 's', state, 'd', payload, 'a', '0', 'c', created, 'o', order, 'g', group)
  end
  local row = { 's', state, 'd', payload, 'a', '0', 'c', created }
  if order then
    row[#row + 1] = 'o'
    row[#row + 1] = order
  end
  if group ~= '' then
    row[#row + 1] = 'g'
    row[#row + 1] = group
  end
  for _, v in ipairs(rare or {}) do row[#row + 1] = v end
  return redis.call('HSET', key, unpack(row))
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- Collect job \`id\` for admission (see admit) at the tail of ring entry g's arrivals list: only a
-- job just enqueued at the default priority, whose order (its seq, kept in the row's \`o\`) is
-- above every order in any list, so each list stays in order with RPUSH alone.
local function batch_append(batch, g, id)
  local e = batch_entry(batch, g)
  e.f[#e.f + 1] = id
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- Write a new job's row and collect it where it goes: the arrivals list of its lane (claimable
-- now at the default priority), its lane's zset (claimable now with a priority), or \`later\`
-- (due at \`due\` > now: \`later.scores\` the ZADD arguments for K_SCHEDULED, \`later.ids\` a set).
-- \`key\` is its row's key, \`seq\` its arrival sequence number, \`group\` '' for none, \`priority\`,
-- \`max_attempts\` and \`backoff\` as enqueue takes them (text; \`priority\` a number), \`traceparent\`
-- nil for none, \`dedupe\` the deduplication key it takes (nil for none: the caller writes the key
-- itself) and \`dedupe_ttl\` that key's window in ms, text (nil: until the job finishes), kept in
-- the row as \`dk\` and \`dt\`, \`parent\` a flow child's parent (\`<queue>|<id>|<policy>\`, kept as \`fp\`;
-- nil for none). Collects its event (\`added\` j, g, and \`k\`, \`d\` when \`fired_by\` names
-- the scheduler that fired it for slot \`slot\`; \`scheduled\` j, g, d). Returns its state.
local function add_job(batch, later, key, id, payload, group, priority, max_attempts, backoff, seq, due, now, now_text, traceparent, fired_by, slot, dedupe, dedupe_ttl, parent)
  local order = priority * 4294967296 + (seq % 4294967296)
  local state = 'pending'
  if due > now then state = 'scheduled' end
  -- a scheduled job is in no lane until promoted: its row keeps the order meanwhile; a job at the
  -- default priority goes to its arrivals list, whose order is its members' rows' \`o\`
  local fresh = state == 'pending' and priority == 0
  local order_text = nil
  if state == 'scheduled' or fresh then order_text = string.format('%d', order) end
  local rare = rare_fields(max_attempts, backoff, priority, traceparent, parent)
  if dedupe then
    rare = rare or {}
    rare[#rare + 1] = 'dk'
    rare[#rare + 1] = dedupe
    if dedupe_ttl then
      rare[#rare + 1] = 'dt'
      rare[#rare + 1] = dedupe_ttl
    end
  end
  write_row(key, state, payload, now_text, order_text, group, rare)
  local event_group = group ~= '' and group or nil
  if state == 'scheduled' then
    local due_text = string.format('%d', due)
    later.scores[#later.scores + 1] = due_text
    later.scores[#later.scores + 1] = id
    later.ids[id] = true
    collect_event('scheduled', id, 'g', event_group, 'd', due_text)
  else
    if fresh then
      batch_append(batch, group, id)
    else
      batch_push(batch, group, order, id)
    end
    collect_event('added', id, 'g', event_group, 'k', fired_by, 'd', slot)
  end
  return state
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- The schedule bell: when one of \`ids\` (a set: id -> true) just became the earliest scheduled job,
-- push a token onto \`sched\` (at most 64) so a parked consumer re-reads the next due time and sets
-- its timer. Nothing is claimable yet, so the doorbell stays quiet.
local function ring_sched_bell(ids)
  local head = redis.call('ZRANGE', K_SCHEDULED, 0, 0)[1]
  if head and ids[head] then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
-- A W3C traceparent as the core formats it ("00-<32 hex>-<16 hex>-<2 hex>", lowercase, 55
-- characters), or nil for "" (none). Anything else is refused with EMQARG before the script
-- writes anything: the row's \`x\` is always a traceparent a reader can parse.
-- The pattern written out, not built with string.rep: Redis runs a script's top level on every
-- call, and building it there cost a single add 5% of its instructions (20k of 384k, callgrind).
local TRACEPARENT = '^00%-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]%-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]%-[0-9a-f][0-9a-f]$'
local function check_traceparent(v)
  if v == '' then return nil end
  if type(v) ~= 'string' or not string.find(v, TRACEPARENT) then
    error(redis.error_reply('EMQARG a traceparent must be 00-<32 hex>-<16 hex>-<2 hex>, got ' .. tostring(v)))
  end
  return v
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- Ring entry g may have stopped being serviceable (its lane emptied, it was paused, its limit
-- was lowered): take it off the ring if so.
local function leave_ring(g)
  if not lane_serviceable(g) then redis.call('LREM', K_RING, 0, g) end
end
-- admit for one job going back in its place (reprocess, a move between groups): into ring entry
-- g's zset at its order \`score\`. Returns true when it is claimable now.
local function admit_one(g, score, id)
  local batch = { order = {} }
  batch_push(batch, g, score, id)
  return admit(batch)
end
-- Debounce (docs/design.md, "Deduplication"): job \`id\`, named by deduplication key \`k\`, takes the
-- payload and due time (\`due\`; at most \`now\`: claimable now) of a later enqueue with that key,
-- when it has not started: pending or scheduled and never claimed (no lease token \`t\`: a retried,
-- released or reprocessed job has one). It keeps its id, group and order, and with them its
-- priority, attempts, backoff and traceparent. Pending and claimable now, it stays where it waits;
-- given a delay, it leaves its lane (and the ring, when that emptied it) for scheduled; scheduled,
-- it takes the new due time, or goes back to its lane at its order when claimable now. The key's
-- window becomes the later enqueue's: \`ttl\` ms from now (text; the key's PX set again), or until
-- finished (\`ttl\` nil). Rings the schedule bell when the job becomes the earliest scheduled one, and
-- collects a \`replaced\` event (j, g, and d its due time when scheduled). Returns false, writing
-- nothing, when the job has started or its row is gone (a ttl key outlives a row deleted at
-- completion); else true, and whether it became claimable now (the caller rings the doorbell).
local function replace_job(id, payload, due, now, k, ttl)
  local key = job_key(id)
  local r = redis.call('HMGET', key, 's', 't', 'g', 'o', 'dt')
  local state = r[1]
  if r[2] or (state ~= 'pending' and state ~= 'scheduled') then return false, false end
  local group = r[3] or nil
  local entry = group or UNGROUPED
  local due_text = nil
  if due > now then due_text = string.format('%d', due) end
  local row = { 'd', payload }
  if ttl then
    row[#row + 1] = 'dt'
    row[#row + 1] = ttl
  elseif r[5] then
    redis.call('HDEL', key, 'dt')
  end
  local claimable = false
  if state == 'pending' and due_text then
    -- a job in an arrivals list has its order in its row; one in the zset may have it only as
    -- its score (a priority given at enqueue)
    local order = r[4] or redis.call('ZSCORE', lane_key(entry), id)
    if redis.call('ZREM', lane_key(entry), id) == 0 then redis.call('LREM', fifo_key(entry), 1, id) end
    leave_ring(entry)
    row[#row + 1] = 's'
    row[#row + 1] = 'scheduled'
    row[#row + 1] = 'o'
    row[#row + 1] = string.format('%d', tonumber(order))
    redis.call('ZADD', K_SCHEDULED, due_text, id)
  elseif state == 'scheduled' and due_text then
    redis.call('ZADD', K_SCHEDULED, due_text, id)
  elseif state == 'scheduled' then
    -- back in its place: a scheduled row carries its order
    redis.call('ZREM', K_SCHEDULED, id)
    row[#row + 1] = 's'
    row[#row + 1] = 'pending'
  end
  redis.call('HSET', key, unpack(row))
  if state == 'scheduled' and not due_text then claimable = admit_one(entry, r[4], id) end
  if due_text then ring_sched_bell({ [id] = true }) end
  -- a key that stays until finished already names the job with no TTL
  if ttl then
    redis.call('SET', dedupe_key(k), id, 'PX', ttl)
  elseif r[5] then
    redis.call('SET', dedupe_key(k), id)
  end
  collect_event('replaced', id, 'g', group, 'd', due_text)
  return true, claimable
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- A waiting flow parent whose children have all finished becomes pending: off the waiting set,
-- into its lane at its order (\`order\`, the row's \`o\`; \`group\` its group or false), with a
-- \`released\` event (n: \`children\`, how many it waited for). Returns whether it is claimable now (the caller rings the doorbell).
local function release_parent(id, group, order, children)
  redis.call('ZREM', K_WAITING, id)
  redis.call('HSET', job_key(id), 's', 'pending')
  collect_event('released', id, 'g', group or nil, 'n', children)
  return admit_one(group, order, id)
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- The queue's retention of dead jobs (meta \`dage\`: the most ms a dead job is kept, \`dmax\`: the
-- most dead jobs kept; set-dead-retention writes them), applied after a burial at \`now\`: at most
-- two of the oldest dead jobs past it are deleted, row and all. Two, not all: a burial does a
-- bounded amount of work, and a backlog (a retention just set or lowered) still shrinks by one
-- a burial; clean('dead') removes it at once. A queue without a retention pays one HMGET. A row
-- deleted releases its ttl dedupe key, as any removal does (an until-finished one went at death),
-- and a flow parent's unfinished children are removed (forget_flow), as removing it would.
local function trim_dead(now)
  local r = redis.call('HMGET', K_META, 'dage', 'dmax', 'fl')
  if not r[1] and not r[2] then return end
  local victims, seen = {}, {}
  local function add(ids)
    for _, id in ipairs(ids) do
      if not seen[id] and #victims < 2 then
        seen[id] = true
        victims[#victims + 1] = id
      end
    end
  end
  if r[1] then
    add(redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', string.format('%d', now - tonumber(r[1])), 'LIMIT', 0, 2))
  end
  if r[2] and #victims < 2 then
    local excess = redis.call('ZCARD', K_DEAD) - tonumber(r[2])
    if excess > 0 then add(redis.call('ZRANGE', K_DEAD, 0, math.min(excess, 2) - 1)) end
  end
  if #victims == 0 then return end
  for _, id in ipairs(victims) do
    if r[3] then
      local row = redis.call('HMGET', job_key(id), 'dk', 'fw')
      release_dedupe(id, row[1])
      if row[2] then forget_flow(id, 'dead', nil, row[2], nil, now) end
    else
      release_dedupe(id, redis.call('HGET', job_key(id), 'dk'))
    end
    redis.call('DEL', job_key(id))
  end
  redis.call('ZREM', K_DEAD, unpack(victims))
end
-- A job that held deduplication key \`k\` (its row's \`dk\`; nil or false: none) in until-finished
-- mode (no \`dt\`, the row's ttl) has finished: completed or dead. The key is released, so the next
-- enqueue with it adds a job; \`forget\` (a dead job's row stays) also takes \`dk\` off the row, so a
-- reprocessed job does not claim a key it no longer holds. A ttl key is left to expire.
local function release_settled(id, k, ttl, forget)
  if not k or ttl then return end
  release_dedupe(id, k)
  if forget then redis.call('HDEL', job_key(id), 'dk') end
end
-- Count \`n\` (>= 1) jobs of kind \`kind\` ('c' completed, 'd' sent to dead) in the minute of \`now\`
-- (the script's server ms) in K_MINUTES, field \`<kind><minute>\`, minute = floor(now / 60000):
-- the per-minute buckets of the last hour counts.lua reads (docs/design.md, "Keyspace"). One
-- HINCRBY a call; only the first write of its kind in a minute (HINCRBY answers n: the field was
-- new) also drops the fields more than 60 minutes older than this one (HKEYS over at most 122
-- fields, one HDEL) and sets the key to expire 61 minutes after this minute starts, a minute after
-- its newest field has left every reader's hour: so a queue gone idle leaves no key behind. At
-- most three commands more per kind and minute: amortised, one command a call.
local function count_minute(kind, n, now)
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', K_MINUTES, kind .. string.format('%d', minute), n) ~= n then return end
  local oldest, old = minute - 60, {}
  for _, field in ipairs(redis.call('HKEYS', K_MINUTES)) do
    local m = tonumber(string.sub(field, 2))
    if not m or m < oldest then old[#old + 1] = field end
  end
  if #old > 0 then redis.call('HDEL', K_MINUTES, unpack(old)) end
  redis.call('PEXPIREAT', K_MINUTES, string.format('%d', (minute + 61) * 60000))
end
-- Move job \`id\`, already out of every other set, to dead with its last error; count it in
-- meta.buried (dead jobs ever, for metrics: the dead set shrinks on reprocess and remove) and in
-- its minute's bucket (count_minute: every way to dead comes through here, the reaper's too), then
-- apply the queue's retention of dead jobs (trim_dead), which may delete this very row when the
-- retention keeps none.
-- \`mark\`: the \`t\` the settle that buries it leaves (settled_token), nil for the reaper, which
-- leaves the claim's bare token so the holder it took the lease from stays fenced off.
-- \`dk\`, \`dt\`: the row's dedupe key and its ttl (false or nil: none): an until-finished key is
-- released and leaves the row (release_settled), so a reprocess does not take it again.
-- \`fp\`, \`token\`: a flow child's parent (its row's \`fp\`; nil for none) and the lease token of the
-- run that died (nil: none), for the news its parent gets through the outbox (report_up).
local function bury(id, err, now, mark, dk, dt, fp, token)
  release_settled(id, dk, dt, true)
  if fp then report_up(id, fp, token, 'd', err, now) end
  redis.call('ZADD', K_DEAD, now, id)
  redis.call('HINCRBY', K_META, 'buried', 1)
  count_minute('d', 1, now)
  if mark then
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now, 't', mark)
  else
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now)
  end
  trim_dead(now)
end
-- A waiting flow parent whose child \`field\` (\`<queue>|<id>\`) died under \`onFailure:
-- 'fail-parent'\` goes to dead with that child's error \`err\`; its row's \`fx\` names the child, so
-- the child reprocessed lets it wait again (flow-apply). A parent that is itself a child tells
-- its own parent (bury).
local function fail_parent(id, field, err, now)
  local key = job_key(id)
  local r = redis.call('HMGET', key, 'g', 'dk', 'dt', 'fp', 't')
  local bar = string.find(field, '|', 1, true)
  local why = 'child ' .. string.sub(field, bar + 1) .. ' of queue ' .. string.sub(field, 1, bar - 1) .. ' failed: ' .. err
  redis.call('ZREM', K_WAITING, id)
  -- before bury: the queue's dead retention may delete the row at once
  redis.call('HSET', key, 'fx', field)
  bury(id, why, now, nil, r[2], r[3], r[4], r[5])
  collect_event('dead', id, 'g', r[1], 'x', why)
end
-- Write a new flow parent's row in state \`waiting\` (docs/design.md, "Flows"), in the waiting set
-- (score: now), with its children hash: \`children\` is their \`<queue>|<id>\` joined by ','. A tree
-- is written children first, so a child may have finished (and told this parent, through the
-- outbox, before its row existed): its news is already in the hash (flow-apply keeps it there, the
-- hash expiring unless this enqueue comes), and counts now. The row keeps the order \`o\`, \`fw\` the
-- children it waits for and \`fd\` how many have finished; \`parent\` (\`fp\`, nil for none) when it is a
-- child itself. The other arguments as add_job takes them. Collects a \`waiting\` event (j, g, n
-- the children). Returns its state: \`waiting\`, \`pending\` (every child had finished: released at
-- once, and whether it is claimable now as a second value) or \`dead\` (a child had failed it).
local function add_parent(key, id, payload, group, priority, max_attempts, backoff, seq, now, now_text, traceparent, parent, children)
  local order = string.format('%d', priority * 4294967296 + (seq % 4294967296))
  local rare = rare_fields(max_attempts, backoff, priority, traceparent, parent) or {}
  local fields = {}
  for f in string.gmatch(children, '[^,]+') do fields[#fields + 1] = f end
  local kids = kids_key(id)
  local total, done, failed = #fields, 0, nil
  if redis.call('EXISTS', kids) == 0 then
    local args = {}
    for _, f in ipairs(fields) do
      args[#args + 1] = f
      args[#args + 1] = '0|w|'
    end
    chunked('HSET', kids, args)
  else
    total = 0
    local seen = chunked('HMGET', kids, fields)
    for i, f in ipairs(fields) do
      local token, kind, body = child_record(seen[i])
      if token < 0 then
        redis.call('HSET', kids, f, '0|w|')
        total = total + 1
      elseif kind == 'x' then
        redis.call('HDEL', kids, f)
      else
        total = total + 1
        if child_done(kind) then done = done + 1 end
        if kind == 'f' and not failed then failed = { f, body } end
      end
    end
    redis.call('PERSIST', kids)
  end
  rare[#rare + 1] = 'fw'
  rare[#rare + 1] = string.format('%d', total)
  rare[#rare + 1] = 'fd'
  rare[#rare + 1] = string.format('%d', done)
  write_row(key, 'waiting', payload, now_text, order, group, rare)
  redis.call('ZADD', K_WAITING, now, id)
  local g = group ~= '' and group or false
  collect_event('waiting', id, 'g', g, 'n', total)
  if failed then
    fail_parent(id, failed[1], failed[2], now)
    return 'dead', false
  end
  if done >= total then return 'pending', release_parent(id, g, order, total) end
  return 'waiting', false
end

local request_key, caller_key = ARGV[2], ARGV[4] == '1'
local traceparent = check_traceparent(ARGV[5])
local n = arg_int(ARGV[6], 'n', 1)
local FIELDS = 14
local FIRST = 7
-- the jobs' 13 fields each, from J[FIRST + 1] on: ARGV itself ("f"), or, for plain ("p") and
-- linked ("l") jobs, the values given with the other fields' defaults written in (J[7] "f"
-- whatever the form, so a caller's key fingerprints the same jobs alike in every form)
local J = ARGV
local form = ARGV[7]
local per = ({ p = 2, l = 5 })[form]
if per then
  if #ARGV ~= FIRST + per * n then
    error(redis.error_reply('EMQARG jobs of form ' .. form .. ' take ' .. per .. ' values each: ' .. n .. ' jobs, ' .. (#ARGV - FIRST) .. ' values'))
  end
  J = { ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], 'f' }
  local max_text = string.format('%d', DEFAULT_MAX_ATTEMPTS)
  for i = 0, n - 1 do
    local b, s = FIRST + i * FIELDS, FIRST + i * per
    local id, payload, group, parent, children = '', ARGV[s + 1], ARGV[s + 2], '', ''
    if per == 5 then id, payload, group, parent, children = ARGV[s + 1], ARGV[s + 2], ARGV[s + 3], ARGV[s + 4], ARGV[s + 5] end
    J[b + 1], J[b + 2], J[b + 3], J[b + 4], J[b + 5], J[b + 6], J[b + 7] = id, payload, group, '-1', '-1', '0', max_text
    J[b + 8], J[b + 9], J[b + 10], J[b + 11], J[b + 12], J[b + 13], J[b + 14] = DEFAULT_BACKOFF, '', '-1', '0', parent, children, '-1'
  end
elseif form ~= 'f' then
  error(redis.error_reply('EMQARG the jobs\\' form is "p", "l" or "f", got ' .. tostring(form)))
end
-- whether any job has a dedupe key: its answer is not known before the key is read
local dedupe = false
-- whether every job takes a generated id (its reply can then be recorded compactly)
local generated_only = true
-- plain jobs need no checks: their fields are the defaults (a group's name is checked by the client)
for i = 0, form ~= 'p' and n - 1 or -1 do
  local b = FIRST + i * FIELDS
  if J[b + 1] ~= '' then
    check_kind(J[b + 1])
    generated_only = false
  end
  arg_int(J[b + 4], 'delayMs', -1)
  arg_int(J[b + 5], 'runAt', -1)
  arg_int(J[b + 6], 'priority', 0)
  arg_int(J[b + 7], 'maxAttempts', 1)
  if J[b + 14] ~= '-1' then arg_int(J[b + 14], 'timeoutMs', 1) end
  if J[b + 9] ~= '' then
    dedupe = true
    if #J[b + 9] > 1024 then error(redis.error_reply('EMQARG a dedupe key is at most 1024 bytes')) end
    if J[b + 1] ~= '' then error(redis.error_reply('EMQARG a job takes a dedupe key or an id, not both')) end
    if arg_int(J[b + 10], 'dedupe ttlMs', -1) == 0 then error(redis.error_reply('EMQARG dedupe ttlMs must be -1 or >= 1, got 0')) end
    if J[b + 11] ~= '1' and J[b + 11] ~= '0' then error(redis.error_reply('EMQARG dedupe replace must be 1 or 0, got ' .. tostring(J[b + 11]))) end
  end
  -- a flow's links (docs/design.md, "Flows"): a parent is written with its id, and runs when its
  -- children have finished, never at a time of its own
  local parent, children = J[b + 12], J[b + 13]
  if parent ~= '' and not string.match(parent, '^[%w%._%-]+|JOB:[^|,]+|[fir]$') then
    error(redis.error_reply('EMQARG a flow parent is "<queue>|<id>|<f|i|r>", got ' .. parent))
  end
  if children ~= '' then
    if J[b + 1] == '' then error(redis.error_reply('EMQARG a flow parent needs an id')) end
    if J[b + 4] ~= '-1' or J[b + 5] ~= '-1' then error(redis.error_reply('EMQARG a flow parent takes no delayMs or runAt')) end
    for f in string.gmatch(children, '[^,]+') do
      if not string.match(f, '^[%w%._%-]+|JOB:[^|]+$') then error(redis.error_reply('EMQARG a flow child is "<queue>|<id>", got ' .. f)) end
    end
  end
end

-- a request seen before answers as it did the first time: its reply was lost, or a client retried
local request, fingerprint = nil, ''
-- A reply of generated ids only is recorded as "#<first seq>,<n>,<states>": the ids are
-- fresh_id(first seq + 0 .. n - 1), and the states one letter a job (p pending, s scheduled), or
-- one letter for all. A call of 1000 jobs records 20 bytes, not their ids' 25 KB of JSON, which
-- stayed in memory the request key's 2 minutes (25 bytes a job in a bulk enqueue).
local STATE_LETTER, LETTER_STATE = { pending = 'p', scheduled = 's' }, { p = 'pending', s = 'scheduled' }
local function compact_reply(first_seq, states)
  local letters, same = {}, true
  for i, state in ipairs(states) do
    letters[i] = STATE_LETTER[state]
    if state ~= states[1] then same = false end
  end
  return '#' .. string.format('%d', first_seq) .. ',' .. #states .. ',' .. (same and letters[1] or table.concat(letters))
end
local function replay_compact(body)
  local first_seq, count, letters = string.match(body, '^#(%d+),(%d+),(%a+)$')
  first_seq, count = tonumber(first_seq), tonumber(count)
  local reply = {}
  for i = 0, count - 1 do
    reply[#reply + 1] = fresh_id(first_seq + i)
    reply[#reply + 1] = LETTER_STATE[#letters == 1 and letters or string.sub(letters, i + 1, i + 1)]
  end
  return reply
end
local function first_reply(seen)
  local sep = string.find(seen, '\\n', 1, true)
  if string.sub(seen, 1, sep - 1) ~= fingerprint then
    return redis.error_reply('EMQCONFLICT the idempotency key ' .. request_key .. ' was used with other jobs')
  end
  local body = string.sub(seen, sep + 1)
  if string.sub(body, 1, 1) == '#' then return replay_compact(body) end
  return cjson.decode(body)
end
if request_key ~= '' then
  local ttl = arg_int(ARGV[3], 'requestTtlMs', 1)
  request = { key = PREFIX .. 'req:' .. request_key, ttl = string.format('%d', ttl) }
  -- a caller's key may come back with other jobs, and its repeat must write nothing at all: it is
  -- looked up first. A key of the core's own is random per call: see below
  if caller_key then
    fingerprint = redis.sha1hex(table.concat(J, '\\n', FIRST - 1))
    local seen = redis.call('GET', request.key)
    if seen then return first_reply(seen) end
  end
end

-- a job's due time (-1: claimable now) from its delay or run-at time
local function due_of(b, now)
  local delay, run_at = tonumber(J[b + 4]), tonumber(J[b + 5])
  if delay > 0 then return now + delay end
  if run_at >= 0 then return run_at end
  return -1
end

local now = now_ms()
-- as text once: a Lua number passed to Redis is formatted on every call
local now_text = string.format('%d', now)
local seq = take_seq(n)
-- the common case, every id new (a generated one is "JOB:" and its job's sequence number), is
-- known with one EXISTS for the batch, or with none when every id is generated and no caller's
-- id can hold one (meta \`ng\`; in a partition no caller's id has the \`~\` a generated one has);
-- otherwise each id is checked as it comes
local wanted, given, above_seq = {}, false, false
for i = 0, n - 1 do
  local id = J[FIRST + i * FIELDS + 1]
  if id == '' then
    id = fresh_id(seq + i + 1)
  else
    given = true
    -- a caller's id of a generated one's form, numbered past what this call takes: a later
    -- generated id may be it
    local number = string.match(id, '^JOB:([1-9]%d*)$')
    if number and tonumber(number) > seq + n then above_seq = true end
  end
  wanted[i + 1] = id
end
local all_ids_new, new_keys
if given or not (queue_meta().ng or FRESH_ID_SUFFIX ~= '') then
  all_ids_new, new_keys = all_new(wanted)
else
  all_ids_new, new_keys = true, {}
  for i, id in ipairs(wanted) do new_keys[i] = job_key(id) end
end

-- a key of the core's own: when every id is new (the usual case) the reply is known before any
-- row is written, so one SET NX GET both records it and finds a repeat (whose generated ids are
-- new too: the first run took their numbers). A repeat costs only sequence numbers
if request and not caller_key then
  if all_ids_new and not dedupe then
    local states = {}
    for i = 0, n - 1 do
      states[i + 1] = due_of(FIRST + i * FIELDS, now) > now and 'scheduled' or 'pending'
    end
    local record
    if generated_only then
      record = compact_reply(seq + 1, states)
    else
      local first = {}
      for i = 1, n do
        first[#first + 1] = wanted[i]
        first[#first + 1] = states[i]
      end
      record = cjson.encode(first)
    end
    local seen = redis.call('SET', request.key, '\\n' .. record, 'NX', 'PX', request.ttl, 'GET')
    if seen then return first_reply(seen) end
    request = nil
  else
    local seen = redis.call('GET', request.key)
    if seen then return first_reply(seen) end
  end
end
-- before the first row that could hold a later generated id is written (a repeat wrote nothing)
if above_seq and queue_meta().ng then
  redis.call('HDEL', K_META, 'ng')
  queue_meta().ng = false
end
local batch = { order = {} }
local reply = {}
local later = { scores = {}, ids = {} }
local wrote = false
local claimable = false
-- places the jobs collected so far: scheduled, or into their lanes
local function place()
  chunked('ZADD', K_SCHEDULED, later.scores)
  if #later.scores > 0 then ring_sched_bell(later.ids) end
  if admit(batch) then claimable = true end
  batch, later = { order = {} }, { scores = {}, ids = {} }
end
-- dedupe keys taken by jobs of this call
local taken, took = {}, false
-- whether any job of this call is part of a flow (meta \`fl\`: the claims, settles and bulk deletes then read links)
local flows = false
-- whether any job of this call has a timeout of its own (meta \`tm\`)
local timed = false

for i = 0, n - 1 do
  local b = FIRST + i * FIELDS
  local id, payload, group = J[b + 1], J[b + 2], J[b + 3]
  local priority, max_attempts, backoff = tonumber(J[b + 6]), J[b + 7], J[b + 8]
  local dk, dt = J[b + 9], J[b + 10]
  if dk == '' then dk = nil end
  if dt == '-1' then dt = nil end
  seq = seq + 1
  local holder = nil
  if dk then
    -- a job of this call holds it: it is placed first, so a replace finds it where a later call would
    if taken[dk] then place() end
    holder = redis.call('GET', dedupe_key(dk))
  end
  if holder then
    local state = 'duplicate'
    if J[b + 11] == '1' then
      local replaced, now_claimable = replace_job(holder, payload, due_of(b, now), now, dk, dt)
      if replaced then
        state, wrote = 'replaced', true
        claimable = claimable or now_claimable
      end
    end
    reply[#reply + 1] = holder
    reply[#reply + 1] = state
    id = nil
  elseif all_ids_new then
    id = wanted[i + 1]
  elseif id == '' then
    id = fresh_id(seq)
    while redis.call('EXISTS', job_key(id)) == 1 do
      id = fresh_id(take_seq(1) + 1)
    end
  elseif redis.call('EXISTS', job_key(id)) == 1 then
    reply[#reply + 1] = id
    reply[#reply + 1] = 'duplicate'
    id = nil
  end
  if id then
    local key = all_ids_new and new_keys[i + 1] or job_key(id)
    local parent, children = J[b + 12], J[b + 13]
    if parent == '' then parent = nil end
    -- a feature's flag goes before the first row that carries its fields: the claims and settles
    -- read those fields only under it (includes/queue_meta.lua)
    if dk and not took then redis.call('HSET', K_META, 'dd', '1') end
    if (children ~= '' or parent) and not flows then redis.call('HSET', K_META, 'fl', '1') end
    local state
    if children ~= '' then
      local now_claimable
      state, now_claimable = add_parent(key, id, payload, group, priority, max_attempts, backoff, seq, now, now_text, traceparent, parent, children)
      claimable = claimable or now_claimable
      flows = true
    else
      state = add_job(batch, later, key, id, payload, group, priority, max_attempts, backoff, seq, due_of(b, now), now, now_text, traceparent, nil, nil, dk, dt, parent)
      if parent then flows = true end
    end
    if dk then
      if dt then redis.call('SET', dedupe_key(dk), id, 'PX', dt) else redis.call('SET', dedupe_key(dk), id) end
      taken[dk], took = true, true
    end
    -- the job's own timeout (meta \`tm\` first: the claims read \`to\` only under it)
    if J[b + 14] ~= '-1' then
      if not timed then redis.call('HSET', K_META, 'tm', '1') end
      timed = true
      redis.call('HSET', key, 'to', J[b + 14])
    end
    reply[#reply + 1] = id
    reply[#reply + 1] = state
    wrote = true
  end
end

place()
if claimable then ring_doorbell() end
-- remembered only when it wrote: a request of duplicates alone answers the same when repeated,
-- and writes nothing (invariant 3)
if request and wrote then redis.call('SET', request.key, fingerprint .. '\\n' .. cjson.encode(reply), 'PX', request.ttl) end
flush_events()
return reply
`,
  },
  eventsSettings: {
    name: "eventsSettings",
    sha1: "187630eb2a7f195b2d0828dd6a76e8c5a93d4905",
    lua: `--[[
  events-settings: the queue's events settings (see set-events).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    {maxLen, resultBytes}, the defaults (10000, 1024) for what was never set
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end

local cap, bytes = events_settings()
return { tonumber(cap), bytes }
`,
  },
  extend: {
    name: "extend",
    sha1: "dc362b08263482fab93f6fb0286beff5b363dcce",
    lua: `--[[
  extend: renew the leases of jobs still held, fenced on (id, token).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  leaseMs (>= 1): the new deadline is the server's TIME plus this
  ARGV[3..] pairs: id, token
  Derives  emq:{q}:job:<id>
  Reply    {deadline or 0, ...}: the new lease deadline (ms), 0 when fenced off (the holder lost
           the job: it must stop). An extend sent again renews again while the lease is active
           under the token (a later deadline, harmless) and answers 0 once it is not
  Errors   EMQKIND, EMQARG
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The fence for a settle that needs nothing else of the row (complete, extend): whether job \`id\`
-- is active under lease token \`token\`. Returns its group ('' for none) when it is, else nil and
-- the row's state and \`t\` (false when absent), for each_held's repeat check.
-- Reads three fields where hold reads eight: a completing batch pays per job for every one.
local function held_group(id, token)
  local r = redis.call('HMGET', job_key(id), 's', 't', 'g')
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  return r[3] or ''
end
-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index \`first\`, \`stride\` values
-- each. \`fence(id, token)\` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token (then the row's state
-- and \`t\` after it); \`act(id, held, i)\` settles a held job (\`held\` what fence returned, \`i\` the index
-- of its id, its other values after it) and returns its code. A job not held is left as it was:
-- its code is \`again(token, state, t)\` (nil for a settle without one: 0), the code a repeat of
-- this settle answers when the row shows it already ran under that token (its reply was lost and
-- the request sent again), else 0, fenced off. Returns the codes in ARGV order. The caller runs
-- the ids through check_kind before: the kind door's errors come before any write, and act writes.
local function each_held(first, stride, fence, act, again)
  local codes = {}
  for i = first, #ARGV, stride do
    local id, token = ARGV[i], ARGV[i + 1]
    local held, state, t = fence(id, token)
    if held then
      codes[#codes + 1] = act(id, held, i)
    elseif again then
      codes[#codes + 1] = again(token, state, t)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end

local lease_ms = arg_int(ARGV[2], 'leaseMs', 1)
for i = 3, #ARGV, 2 do check_kind(ARGV[i]) end
local deadline = now_ms() + lease_ms
return each_held(3, 2, held_group, function(id)
  redis.call('ZADD', K_ACTIVE, 'XX', deadline, id)
  return deadline
end)
`,
  },
  fail: {
    name: "fail",
    sha1: "de559b511eb25eda00b796221f4a8fc7044fc87b",
    lua: `--[[
  fail: a leased job failed for good (an unrecoverable error): straight to dead, whatever attempts
  remain; fenced on (id, token).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] triples: id, token, error text
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:minutes
           (each death counted in its minute: includes/bury.lua)
  Reply    { {code, ...}, {outbox entries written: a flow child's death, for its parent} }: 1 dead, 0 fenced off (nothing changed). A repeat (the same id and token
           again: a reply lost and the request sent again) answers 1 and writes nothing, whatever
           became of the job since short of a new claim or a remove
  Events   \`dead\` (j, g, a, x the error) per job failed, in ARGV order, in one entry; a fenced-off
           job or a repeat appends nothing
  Repeats  the fail leaves \`<token>/f1\` in \`t\` (includes/settled_token.lua). Only the holder of
           the token can write that mark (the fence) and a token is handed out once in the queue
           (invariant 4), so the mark means this very fail ran. reprocess keeps \`t\` (and \`a\`):
           a repeat after it still answers 1 and must not bury the job again; a claim rewrites
           \`t\` and remove deletes the row: then fenced. The reaper buries with the claim's bare
           token, and a retry's burial leaves \`/r3\`, so neither is taken for this fail's repeat
  Dedupe   the job releases its until-finished dedupe key, which leaves its row (bury)
  Errors   EMQKIND, raised before anything is written
  Rings    the doorbell when a freed group slot made work claimable
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- The fence: the row of job \`id\` if it is active under lease token \`token\` (its \`t\`), else nil
-- and the row's state and \`t\` (false when absent), for each_held's repeat check.
-- Returns {attempts, group or false, max attempts, attempts base, backoff, order score, dedupe key
-- \`dk\` or false, its ttl \`dt\` or false, a flow child's parent \`fp\` or false}, the defaults filled in for an absent \`m\` or \`b\`; an
-- active row always has its order (claim wrote it).
local function hold(id, token)
  local r = redis.call('HMGET', job_key(id), 's', 't', 'a', 'g', 'm', 'z', 'b', 'o', 'dk', 'dt', 'fp')
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  return { tonumber(r[3]), r[4], tonumber(r[5]) or DEFAULT_MAX_ATTEMPTS, tonumber(r[6] or '0'), r[7] or DEFAULT_BACKOFF, r[8], r[9], r[10], r[11] }
end
-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index \`first\`, \`stride\` values
-- each. \`fence(id, token)\` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token (then the row's state
-- and \`t\` after it); \`act(id, held, i)\` settles a held job (\`held\` what fence returned, \`i\` the index
-- of its id, its other values after it) and returns its code. A job not held is left as it was:
-- its code is \`again(token, state, t)\` (nil for a settle without one: 0), the code a repeat of
-- this settle answers when the row shows it already ran under that token (its reply was lost and
-- the request sent again), else 0, fenced off. Returns the codes in ARGV order. The caller runs
-- the ids through check_kind before: the kind door's errors come before any write, and act writes.
local function each_held(first, stride, fence, act, again)
  local codes = {}
  for i = first, #ARGV, stride do
    local id, token = ARGV[i], ARGV[i + 1]
    local held, state, t = fence(id, token)
    if held then
      codes[#codes + 1] = act(id, held, i)
    elseif again then
      codes[#codes + 1] = again(token, state, t)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end
-- The \`t\` a settle leaves in the row it moves out of active: the holder's lease token, '/', then
-- what the settle did, \`what\`: the script's letter and its reply code ('r1' retried for later,
-- 'r2' retried now, 'r3' buried by retry, 'f1' failed, 'g1' given back). A claim writes a bare
-- token and no other script writes a mark, so the mark says that this very settle ran: a repeat
-- of it (its reply lost, the request sent again) answers as it did and writes nothing
-- (includes/repeat_code.lua), where a holder whose lease the reaper took finds its token bare.
local function settled_token(token, what)
  return token .. '/' .. what
end
-- What a settle answers for a job it does not hold, from the row's \`t\`: when \`t\` is the mark this
-- settle leaves (settled_token(token, kind .. code), \`code\` one of \`codes\`), the settle already
-- ran under this token (a repeat of it: its reply was lost and the request sent again), so the code
-- it answered then; else 0, fenced off.
local function repeat_code(token, t, kind, codes)
  for _, code in ipairs(codes) do
    if t == settled_token(token, kind .. code) then return code end
  end
  return 0
end
-- Count \`g\` once in \`tally\`, {order = {groups in first-seen order}, [g] = count}: settling a
-- batch frees each group's slots in one step (free_slots) instead of one per job.
local function tally(t, g)
  if not g or g == '' then return end
  if not t[g] then
    t[g] = 0
    t.order[#t.order + 1] = g
  end
  t[g] = t[g] + 1
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- The entries of \`entries\` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- The tail every settle shares: free the group slots counted in \`freed\` (tally), then admit the
-- jobs collected in \`batch\` (batch_push; nil when nothing goes back to a lane). Slots first: a
-- lane that gets its job back and a freed slot goes on the ring once. Returns true when either
-- made work claimable; the caller rings the doorbell, once (beat rings once for its reaping and
-- its promotion together, so this does not ring itself).
local function free_and_admit(freed, batch)
  local woke = free_slots(freed)
  if batch and admit(batch) then woke = true end
  return woke
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- The queue's retention of dead jobs (meta \`dage\`: the most ms a dead job is kept, \`dmax\`: the
-- most dead jobs kept; set-dead-retention writes them), applied after a burial at \`now\`: at most
-- two of the oldest dead jobs past it are deleted, row and all. Two, not all: a burial does a
-- bounded amount of work, and a backlog (a retention just set or lowered) still shrinks by one
-- a burial; clean('dead') removes it at once. A queue without a retention pays one HMGET. A row
-- deleted releases its ttl dedupe key, as any removal does (an until-finished one went at death),
-- and a flow parent's unfinished children are removed (forget_flow), as removing it would.
local function trim_dead(now)
  local r = redis.call('HMGET', K_META, 'dage', 'dmax', 'fl')
  if not r[1] and not r[2] then return end
  local victims, seen = {}, {}
  local function add(ids)
    for _, id in ipairs(ids) do
      if not seen[id] and #victims < 2 then
        seen[id] = true
        victims[#victims + 1] = id
      end
    end
  end
  if r[1] then
    add(redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', string.format('%d', now - tonumber(r[1])), 'LIMIT', 0, 2))
  end
  if r[2] and #victims < 2 then
    local excess = redis.call('ZCARD', K_DEAD) - tonumber(r[2])
    if excess > 0 then add(redis.call('ZRANGE', K_DEAD, 0, math.min(excess, 2) - 1)) end
  end
  if #victims == 0 then return end
  for _, id in ipairs(victims) do
    if r[3] then
      local row = redis.call('HMGET', job_key(id), 'dk', 'fw')
      release_dedupe(id, row[1])
      if row[2] then forget_flow(id, 'dead', nil, row[2], nil, now) end
    else
      release_dedupe(id, redis.call('HGET', job_key(id), 'dk'))
    end
    redis.call('DEL', job_key(id))
  end
  redis.call('ZREM', K_DEAD, unpack(victims))
end
-- A job that held deduplication key \`k\` (its row's \`dk\`; nil or false: none) in until-finished
-- mode (no \`dt\`, the row's ttl) has finished: completed or dead. The key is released, so the next
-- enqueue with it adds a job; \`forget\` (a dead job's row stays) also takes \`dk\` off the row, so a
-- reprocessed job does not claim a key it no longer holds. A ttl key is left to expire.
local function release_settled(id, k, ttl, forget)
  if not k or ttl then return end
  release_dedupe(id, k)
  if forget then redis.call('HDEL', job_key(id), 'dk') end
end
-- Count \`n\` (>= 1) jobs of kind \`kind\` ('c' completed, 'd' sent to dead) in the minute of \`now\`
-- (the script's server ms) in K_MINUTES, field \`<kind><minute>\`, minute = floor(now / 60000):
-- the per-minute buckets of the last hour counts.lua reads (docs/design.md, "Keyspace"). One
-- HINCRBY a call; only the first write of its kind in a minute (HINCRBY answers n: the field was
-- new) also drops the fields more than 60 minutes older than this one (HKEYS over at most 122
-- fields, one HDEL) and sets the key to expire 61 minutes after this minute starts, a minute after
-- its newest field has left every reader's hour: so a queue gone idle leaves no key behind. At
-- most three commands more per kind and minute: amortised, one command a call.
local function count_minute(kind, n, now)
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', K_MINUTES, kind .. string.format('%d', minute), n) ~= n then return end
  local oldest, old = minute - 60, {}
  for _, field in ipairs(redis.call('HKEYS', K_MINUTES)) do
    local m = tonumber(string.sub(field, 2))
    if not m or m < oldest then old[#old + 1] = field end
  end
  if #old > 0 then redis.call('HDEL', K_MINUTES, unpack(old)) end
  redis.call('PEXPIREAT', K_MINUTES, string.format('%d', (minute + 61) * 60000))
end
-- Move job \`id\`, already out of every other set, to dead with its last error; count it in
-- meta.buried (dead jobs ever, for metrics: the dead set shrinks on reprocess and remove) and in
-- its minute's bucket (count_minute: every way to dead comes through here, the reaper's too), then
-- apply the queue's retention of dead jobs (trim_dead), which may delete this very row when the
-- retention keeps none.
-- \`mark\`: the \`t\` the settle that buries it leaves (settled_token), nil for the reaper, which
-- leaves the claim's bare token so the holder it took the lease from stays fenced off.
-- \`dk\`, \`dt\`: the row's dedupe key and its ttl (false or nil: none): an until-finished key is
-- released and leaves the row (release_settled), so a reprocess does not take it again.
-- \`fp\`, \`token\`: a flow child's parent (its row's \`fp\`; nil for none) and the lease token of the
-- run that died (nil: none), for the news its parent gets through the outbox (report_up).
local function bury(id, err, now, mark, dk, dt, fp, token)
  release_settled(id, dk, dt, true)
  if fp then report_up(id, fp, token, 'd', err, now) end
  redis.call('ZADD', K_DEAD, now, id)
  redis.call('HINCRBY', K_META, 'buried', 1)
  count_minute('d', 1, now)
  if mark then
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now, 't', mark)
  else
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now)
  end
  trim_dead(now)
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

for i = 2, #ARGV, 3 do check_kind(ARGV[i]) end
local now = now_ms()
local freed, outcomes = { order = {} }, { 1 }
local codes = each_held(2, 3, hold, function(id, row, i)
  redis.call('ZREM', K_ACTIVE, id)
  tally(freed, row[2])
  bury(id, ARGV[i + 2], now, settled_token(ARGV[i + 1], 'f1'), row[7], row[8], row[9], ARGV[i + 1])
  collect_event('dead', id, 'g', row[2], 'a', row[1] - row[4], 'x', ARGV[i + 2])
  return 1
end, function(token, _, t)
  return repeat_code(token, t, 'f', outcomes)
end)
if free_and_admit(freed) then ring_doorbell() end
flush_events()
return { codes, outbox_written }
`,
  },
  fireSchedulers: {
    name: "fireSchedulers",
    sha1: "206a84d8d407898392074f7180ae38498a2faa46",
    lua: `--[[
  fire-schedulers: fire due scheduler slots, each fenced on the revision and slot its caller read
  (from a beat's reply: includes/due_schedulers.lua), so a second runtime firing the same slot
  writes nothing. A slot fired enqueues its scheduler's job with the id \`JOB:<scheduler>@<slot>\`
  (an id no caller can give: a firing repeated is a duplicate) claimable now, and moves the
  scheduler on to the next slot its caller worked out (after the slot and after now: missed slots
  are not fired one by one, docs/design.md "Schedulers"), or to none once its limit is reached.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  n, the number of schedulers (>= 1)
  then 4 values per scheduler: id, the revision read, the slot read (ms), the next slot (ms, -1:
           it fires no more)
  Derives  emq:{q}:scheduler:<id>, emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    {now, next due time or -1, fired, the id of each job fired or "" for a fenced one, in
           ARGV order}
  Events   \`added\` (j, g, k the scheduler, d the slot) per job fired, in one entry
  Counts   meta \`fired\` += the slots fired
  Errors   EMQARG (a malformed number), raised before any write
  Rings    the doorbell when a job fired is claimable. Not the schedule bell: every consumer
           parked meanwhile armed its timer for the slot fired (it was the next due time when it
           parked, or the upsert that made it rang the bell), and that timer's beat reads the
           next slot; ringing would wake one of them for a beat that learns nothing new
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The row of scheduler \`id\`: emq:{q}:scheduler:<id> (a hash, docs/design.md "Schedulers").
local function scheduler_key(id)
  return PREFIX .. 'scheduler:' .. id
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- A new row's fields that it has only when they differ from the defaults: \`m\` max attempts, \`b\`
-- the backoff spec (both text, as enqueue takes them), \`p\` the priority (a number, > 0), \`x\` the
-- traceparent (nil for none), \`fp\` a flow child's parent (nil for none), as a flat field-value
-- list, or nil when it has none (the usual row: write_row then passes its fields as arguments).
local function rare_fields(max_attempts, backoff, priority, traceparent, parent)
  local rare = nil
  if tonumber(max_attempts) ~= DEFAULT_MAX_ATTEMPTS then rare = { 'm', max_attempts } end
  if backoff ~= DEFAULT_BACKOFF then
    rare = rare or {}
    rare[#rare + 1] = 'b'
    rare[#rare + 1] = backoff
  end
  if priority > 0 then
    rare = rare or {}
    rare[#rare + 1] = 'p'
    rare[#rare + 1] = string.format('%d', priority)
  end
  if traceparent then
    rare = rare or {}
    rare[#rare + 1] = 'x'
    rare[#rare + 1] = traceparent
  end
  if parent then
    rare = rare or {}
    rare[#rare + 1] = 'fp'
    rare[#rare + 1] = parent
  end
  return rare
end
-- Write a new job's row: its state, payload, attempts ('0') and created time, then its order \`o\`
-- and group \`g\` when it has them (order nil, group ''), then \`rare\`: nil, or a list of the
-- field-value pairs a row has only when they differ from the defaults (a priority among them).
-- The usual shape, a row with its order and no rare field, goes to HSET as arguments: a table
-- made for each row and unpacked costs about as much again as the HSET (~0.7 us a row, Redis 7).
local function write_row(key, state, payload, created, order, group, rare)
  if order and not rare then
    if group == '' then
      return redis.call('HSET', key, 's', state, 'd', payload, 'a', '0', 'c', created, 'o', order)
    end
    return redis.call('HSET', key, 's', state, 'd', payload, 'a', '0', 'c', created, 'o', order, 'g', group)
  end
  local row = { 's', state, 'd', payload, 'a', '0', 'c', created }
  if order then
    row[#row + 1] = 'o'
    row[#row + 1] = order
  end
  if group ~= '' then
    row[#row + 1] = 'g'
    row[#row + 1] = group
  end
  for _, v in ipairs(rare or {}) do row[#row + 1] = v end
  return redis.call('HSET', key, unpack(row))
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- Collect job \`id\` for admission (see admit) at the tail of ring entry g's arrivals list: only a
-- job just enqueued at the default priority, whose order (its seq, kept in the row's \`o\`) is
-- above every order in any list, so each list stays in order with RPUSH alone.
local function batch_append(batch, g, id)
  local e = batch_entry(batch, g)
  e.f[#e.f + 1] = id
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- Write a new job's row and collect it where it goes: the arrivals list of its lane (claimable
-- now at the default priority), its lane's zset (claimable now with a priority), or \`later\`
-- (due at \`due\` > now: \`later.scores\` the ZADD arguments for K_SCHEDULED, \`later.ids\` a set).
-- \`key\` is its row's key, \`seq\` its arrival sequence number, \`group\` '' for none, \`priority\`,
-- \`max_attempts\` and \`backoff\` as enqueue takes them (text; \`priority\` a number), \`traceparent\`
-- nil for none, \`dedupe\` the deduplication key it takes (nil for none: the caller writes the key
-- itself) and \`dedupe_ttl\` that key's window in ms, text (nil: until the job finishes), kept in
-- the row as \`dk\` and \`dt\`, \`parent\` a flow child's parent (\`<queue>|<id>|<policy>\`, kept as \`fp\`;
-- nil for none). Collects its event (\`added\` j, g, and \`k\`, \`d\` when \`fired_by\` names
-- the scheduler that fired it for slot \`slot\`; \`scheduled\` j, g, d). Returns its state.
local function add_job(batch, later, key, id, payload, group, priority, max_attempts, backoff, seq, due, now, now_text, traceparent, fired_by, slot, dedupe, dedupe_ttl, parent)
  local order = priority * 4294967296 + (seq % 4294967296)
  local state = 'pending'
  if due > now then state = 'scheduled' end
  -- a scheduled job is in no lane until promoted: its row keeps the order meanwhile; a job at the
  -- default priority goes to its arrivals list, whose order is its members' rows' \`o\`
  local fresh = state == 'pending' and priority == 0
  local order_text = nil
  if state == 'scheduled' or fresh then order_text = string.format('%d', order) end
  local rare = rare_fields(max_attempts, backoff, priority, traceparent, parent)
  if dedupe then
    rare = rare or {}
    rare[#rare + 1] = 'dk'
    rare[#rare + 1] = dedupe
    if dedupe_ttl then
      rare[#rare + 1] = 'dt'
      rare[#rare + 1] = dedupe_ttl
    end
  end
  write_row(key, state, payload, now_text, order_text, group, rare)
  local event_group = group ~= '' and group or nil
  if state == 'scheduled' then
    local due_text = string.format('%d', due)
    later.scores[#later.scores + 1] = due_text
    later.scores[#later.scores + 1] = id
    later.ids[id] = true
    collect_event('scheduled', id, 'g', event_group, 'd', due_text)
  else
    if fresh then
      batch_append(batch, group, id)
    else
      batch_push(batch, group, order, id)
    end
    collect_event('added', id, 'g', event_group, 'k', fired_by, 'd', slot)
  end
  return state
end
-- Takes \`n\` arrival sequence numbers (meta \`seq\`) and answers the one before the first of them.
-- A queue's very first numbers also set meta \`ng\`: "every generated id is new". A generated id is
-- \`JOB:<seq>\`, and while no caller has given an id of that form numbered above \`seq\`, no row
-- can hold the next one: an enqueue of generated ids alone then asks for no EXISTS (enqueue.lua).
-- A caller's id \`JOB:<n>\` with n above \`seq\` takes the flag away for good (before its row is
-- written), and so does this queue's age: a queue whose \`seq\` predates the flag never gets it.
local function take_seq(n)
  local last = redis.call('HINCRBY', K_META, 'seq', n)
  if last == n then
    redis.call('HSET', K_META, 'ng', '1')
    queue_meta().ng = true
  end
  return last - n
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- The earliest next slot of any scheduler (ms), or -1 when none will fire: a scheduler that fires
-- no more waits in \`schedulers\` with the score +inf, which Redis answers as "inf". A queue that
-- never made a scheduler (meta \`sc\` unset) has none: nothing is read.
local function first_slot()
  if not queue_meta().sc then return -1 end
  local score = redis.call('ZRANGE', K_SCHEDULERS, 0, 0, 'WITHSCORES')[2]
  if score == nil or score == 'inf' then return -1 end
  return tonumber(score)
end
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then. The throttled entries are read only once
-- any was (meta \`th\`), the waits' timeouts once a step was (meta \`st\`).
-- The earliest timeout of a wait for an event (a wait without one scores +inf): -1 for none.
local function first_timeout()
  local at = tonumber(redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  return at or -1
end
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), queue_meta().th and first_score(K_THROTTLED) or -1,
    queue_meta().st and first_timeout() or -1 }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

local n = arg_int(ARGV[2], 'n', 1)
local FIRST, FIELDS = 2, 4
for i = 0, n - 1 do
  local b = FIRST + i * FIELDS
  arg_int(ARGV[b + 2], 'revision', 0)
  arg_int(ARGV[b + 3], 'slot', 0)
  arg_int(ARGV[b + 4], 'next slot', -1)
end

local now = now_ms()
local now_text = string.format('%d', now)
local batch = { order = {} }
local later = { scores = {}, ids = {} }
local jobs, fired = {}, 0
for i = 0, n - 1 do
  local b = FIRST + i * FIELDS
  local id, slot_text, next_slot = ARGV[b + 1], ARGV[b + 3], tonumber(ARGV[b + 4])
  local key = scheduler_key(id)
  local r = redis.call('HMGET', key, 'v', 'n', 'f', 'm', 'd', 'g', 'p', 'ma', 'b')
  local job = ''
  if r[1] == ARGV[b + 2] and r[2] == slot_text then
    local count = tonumber(r[3] or '0') + 1
    if r[4] and count >= tonumber(r[4]) then next_slot = -1 end
    job = 'JOB:' .. id .. '@' .. slot_text
    local row = job_key(job)
    -- a job of this slot exists only when the scheduler was removed and made again: the slot is
    -- fired, and the job that has its id is its job
    if redis.call('EXISTS', row) == 0 then
      local seq = take_seq(1) + 1
      add_job(batch, later, row, job, r[5], r[6] or '', tonumber(r[7] or '0'), r[8], r[9], seq, -1, now, now_text, nil, id, slot_text)
    end
    fired = fired + 1
    redis.call('HSET', key, 'v', string.format('%d', tonumber(r[1]) + 1), 'f', string.format('%d', count), 'l', slot_text)
    if next_slot >= 0 then
      redis.call('HSET', key, 'n', string.format('%d', next_slot))
      redis.call('ZADD', K_SCHEDULERS, next_slot, id)
    else
      redis.call('HDEL', key, 'n')
      redis.call('ZADD', K_SCHEDULERS, '+inf', id)
    end
  end
  jobs[#jobs + 1] = job
end

if admit(batch) then ring_doorbell() end
if fired > 0 then redis.call('HINCRBY', K_META, 'fired', fired) end
flush_events()
local reply = { now, next_due(), fired }
for _, job in ipairs(jobs) do reply[#reply + 1] = job end
return reply
`,
  },
  flowAck: {
    name: "flowAck",
    sha1: "9bb2e54232d132a3c95d635e9c05eac7c6f3d923",
    lua: `--[[
  flow-ack: forget outbox entries that were relayed (docs/design.md, "Flows"): each entry is
  removed only as it was written (a newer entry about the same job is another member), so an
  acknowledgement sent twice or late removes nothing else.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] the entries relayed, as the outbox holds them
  Derives  emq:{q}:outbox
  Reply    how many entries were removed
  Errors   none
  Rings    never
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'

if #ARGV < 2 then return 0 end
local removed = 0
for i = 2, #ARGV, 1000 do
  removed = removed + redis.call('ZREM', K_OUTBOX, unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return removed
`,
  },
  flowApply: {
    name: "flowApply",
    sha1: "a0c4f79dc8a9ce65b76ff2693d99b1ab6d012773",
    lua: `--[[
  flow-apply: apply flow children's news to their parents in this queue (docs/design.md, "Flows").
  A child's outcome is appended to its own queue's outbox in the script that settled it; the
  runtime that got the entry (or a later beat of the child's queue) sends it here, to the
  parent's slot, then acknowledges it there (flow-ack). Each parent keeps the newest news per
  child (includes/child_record.lua), so an entry applied twice, late, or after a newer one
  changes nothing: a crash between the child's settle and this call delays the parent, never
  loses or doubles its release.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua): the parents' queue
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] outbox entries \`u|<child queue>|<child id>|<q>|<parent id>|<policy f|i|r>|<token>|<kind c|d|p|x>|<body>\`
  Derives  emq:{q}:job:<parent id>, emq:{q}:kids:<parent id>, emq:{q}:waiting, lanes on release,
           emq:{q}:minutes (a parent failed: includes/bury.lua)
  Applies  completed (c): the record takes its result; dead (d): with \`fail-parent\` the record
           fails the parent (a waiting parent goes to dead with the child's error), with
           \`ignore\` it counts as finished with its error, with \`remove\` (and a child removed,
           x) the parent stops waiting for it; reprocessed (p): the record is unfinished again,
           and a parent this child failed waits again (unless another child failed it too).
           A parent whose finished children reach the children it waits for is released. A
           parent not written yet (a tree is written children first) keeps the news in its
           children hash, which expires after a day unless the parent's enqueue comes
           (includes/add_parent.lua); a parent that is another job now (no \`fw\`), or that does
           not wait for this child, ignores it
  Reply    {entries applied, parents released}
  Events   \`released\` (j, g) per parent released, \`dead\` (j, g, x) per parent failed, \`waiting\`
           (j, g, n) per parent waiting again, in one entry
  Errors   EMQARG (an entry not of this queue, or malformed), EMQKIND; before anything is written
  Rings    the doorbell when a released parent is claimable now
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- admit for one job going back in its place (reprocess, a move between groups): into ring entry
-- g's zset at its order \`score\`. Returns true when it is claimable now.
local function admit_one(g, score, id)
  local batch = { order = {} }
  batch_push(batch, g, score, id)
  return admit(batch)
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- A waiting flow parent whose children have all finished becomes pending: off the waiting set,
-- into its lane at its order (\`order\`, the row's \`o\`; \`group\` its group or false), with a
-- \`released\` event (n: \`children\`, how many it waited for). Returns whether it is claimable now (the caller rings the doorbell).
local function release_parent(id, group, order, children)
  redis.call('ZREM', K_WAITING, id)
  redis.call('HSET', job_key(id), 's', 'pending')
  collect_event('released', id, 'g', group or nil, 'n', children)
  return admit_one(group, order, id)
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- The queue's retention of dead jobs (meta \`dage\`: the most ms a dead job is kept, \`dmax\`: the
-- most dead jobs kept; set-dead-retention writes them), applied after a burial at \`now\`: at most
-- two of the oldest dead jobs past it are deleted, row and all. Two, not all: a burial does a
-- bounded amount of work, and a backlog (a retention just set or lowered) still shrinks by one
-- a burial; clean('dead') removes it at once. A queue without a retention pays one HMGET. A row
-- deleted releases its ttl dedupe key, as any removal does (an until-finished one went at death),
-- and a flow parent's unfinished children are removed (forget_flow), as removing it would.
local function trim_dead(now)
  local r = redis.call('HMGET', K_META, 'dage', 'dmax', 'fl')
  if not r[1] and not r[2] then return end
  local victims, seen = {}, {}
  local function add(ids)
    for _, id in ipairs(ids) do
      if not seen[id] and #victims < 2 then
        seen[id] = true
        victims[#victims + 1] = id
      end
    end
  end
  if r[1] then
    add(redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', string.format('%d', now - tonumber(r[1])), 'LIMIT', 0, 2))
  end
  if r[2] and #victims < 2 then
    local excess = redis.call('ZCARD', K_DEAD) - tonumber(r[2])
    if excess > 0 then add(redis.call('ZRANGE', K_DEAD, 0, math.min(excess, 2) - 1)) end
  end
  if #victims == 0 then return end
  for _, id in ipairs(victims) do
    if r[3] then
      local row = redis.call('HMGET', job_key(id), 'dk', 'fw')
      release_dedupe(id, row[1])
      if row[2] then forget_flow(id, 'dead', nil, row[2], nil, now) end
    else
      release_dedupe(id, redis.call('HGET', job_key(id), 'dk'))
    end
    redis.call('DEL', job_key(id))
  end
  redis.call('ZREM', K_DEAD, unpack(victims))
end
-- A job that held deduplication key \`k\` (its row's \`dk\`; nil or false: none) in until-finished
-- mode (no \`dt\`, the row's ttl) has finished: completed or dead. The key is released, so the next
-- enqueue with it adds a job; \`forget\` (a dead job's row stays) also takes \`dk\` off the row, so a
-- reprocessed job does not claim a key it no longer holds. A ttl key is left to expire.
local function release_settled(id, k, ttl, forget)
  if not k or ttl then return end
  release_dedupe(id, k)
  if forget then redis.call('HDEL', job_key(id), 'dk') end
end
-- Count \`n\` (>= 1) jobs of kind \`kind\` ('c' completed, 'd' sent to dead) in the minute of \`now\`
-- (the script's server ms) in K_MINUTES, field \`<kind><minute>\`, minute = floor(now / 60000):
-- the per-minute buckets of the last hour counts.lua reads (docs/design.md, "Keyspace"). One
-- HINCRBY a call; only the first write of its kind in a minute (HINCRBY answers n: the field was
-- new) also drops the fields more than 60 minutes older than this one (HKEYS over at most 122
-- fields, one HDEL) and sets the key to expire 61 minutes after this minute starts, a minute after
-- its newest field has left every reader's hour: so a queue gone idle leaves no key behind. At
-- most three commands more per kind and minute: amortised, one command a call.
local function count_minute(kind, n, now)
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', K_MINUTES, kind .. string.format('%d', minute), n) ~= n then return end
  local oldest, old = minute - 60, {}
  for _, field in ipairs(redis.call('HKEYS', K_MINUTES)) do
    local m = tonumber(string.sub(field, 2))
    if not m or m < oldest then old[#old + 1] = field end
  end
  if #old > 0 then redis.call('HDEL', K_MINUTES, unpack(old)) end
  redis.call('PEXPIREAT', K_MINUTES, string.format('%d', (minute + 61) * 60000))
end
-- Move job \`id\`, already out of every other set, to dead with its last error; count it in
-- meta.buried (dead jobs ever, for metrics: the dead set shrinks on reprocess and remove) and in
-- its minute's bucket (count_minute: every way to dead comes through here, the reaper's too), then
-- apply the queue's retention of dead jobs (trim_dead), which may delete this very row when the
-- retention keeps none.
-- \`mark\`: the \`t\` the settle that buries it leaves (settled_token), nil for the reaper, which
-- leaves the claim's bare token so the holder it took the lease from stays fenced off.
-- \`dk\`, \`dt\`: the row's dedupe key and its ttl (false or nil: none): an until-finished key is
-- released and leaves the row (release_settled), so a reprocess does not take it again.
-- \`fp\`, \`token\`: a flow child's parent (its row's \`fp\`; nil for none) and the lease token of the
-- run that died (nil: none), for the news its parent gets through the outbox (report_up).
local function bury(id, err, now, mark, dk, dt, fp, token)
  release_settled(id, dk, dt, true)
  if fp then report_up(id, fp, token, 'd', err, now) end
  redis.call('ZADD', K_DEAD, now, id)
  redis.call('HINCRBY', K_META, 'buried', 1)
  count_minute('d', 1, now)
  if mark then
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now, 't', mark)
  else
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now)
  end
  trim_dead(now)
end
-- A waiting flow parent whose child \`field\` (\`<queue>|<id>\`) died under \`onFailure:
-- 'fail-parent'\` goes to dead with that child's error \`err\`; its row's \`fx\` names the child, so
-- the child reprocessed lets it wait again (flow-apply). A parent that is itself a child tells
-- its own parent (bury).
local function fail_parent(id, field, err, now)
  local key = job_key(id)
  local r = redis.call('HMGET', key, 'g', 'dk', 'dt', 'fp', 't')
  local bar = string.find(field, '|', 1, true)
  local why = 'child ' .. string.sub(field, bar + 1) .. ' of queue ' .. string.sub(field, 1, bar - 1) .. ' failed: ' .. err
  redis.call('ZREM', K_WAITING, id)
  -- before bury: the queue's dead retention may delete the row at once
  redis.call('HSET', key, 'fx', field)
  bury(id, why, now, nil, r[2], r[3], r[4], r[5])
  collect_event('dead', id, 'g', r[1], 'x', why)
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end

-- how long a parent not yet written keeps its children's news: a day
local ORPHAN_MS = 86400000
local entries = {}
for i = 2, #ARGV do
  local e, parts, pos = ARGV[i], {}, 1
  for k = 1, 8 do
    local bar = string.find(e, '|', pos, true)
    if not bar then error(redis.error_reply('EMQARG a malformed flow entry: ' .. string.sub(e, 1, 200))) end
    parts[k] = string.sub(e, pos, bar - 1)
    pos = bar + 1
  end
  parts[9] = string.sub(e, pos)
  if parts[1] ~= 'u' or parts[4] ~= QUEUE_NAME or not tonumber(parts[7]) or not CHILD_RANK[parts[8]] or not string.match(parts[6], '^[fir]$') then
    error(redis.error_reply('EMQARG a flow entry not for queue ' .. QUEUE_NAME .. ': ' .. string.sub(e, 1, 200)))
  end
  check_kind(parts[5])
  entries[#entries + 1] = parts
end

local now = now_ms()
-- the entries by parent, in the order each parent first appears: a parent's row and records are
-- read once and written once however many of its children the call brings (a completing batch
-- often brings several)
local parents, order = {}, {}
for _, p in ipairs(entries) do
  local list = parents[p[5]]
  if not list then
    list = {}
    parents[p[5]] = list
    order[#order + 1] = p[5]
  end
  list[#list + 1] = p
end

local released, claimable = 0, false
for _, pid in ipairs(order) do
  local list = parents[pid]
  local key, kids = job_key(pid), kids_key(pid)
  local row = redis.call('HMGET', key, 's', 'fw', 'fd', 'fx', 'g', 'o')
  local fields = {}
  for i, p in ipairs(list) do fields[i] = p[2] .. '|' .. p[3] end
  local olds = chunked('HMGET', kids, fields)
  -- each child's record as this call leaves it (false: none), and the records to write
  local current, changed = {}, {}
  for i, f in ipairs(fields) do
    if current[f] == nil then current[f] = olds[i] end
  end
  local function flush()
    local sets, dels = {}, {}
    for f, v in pairs(changed) do
      if v then
        sets[#sets + 1] = f
        sets[#sets + 1] = v
      else
        dels[#dels + 1] = f
      end
    end
    chunked('HSET', kids, sets)
    chunked('HDEL', kids, dels)
    changed = {}
  end
  local state = row[1]
  local total, done = tonumber(row[2]), tonumber(row[3]) or 0
  local function write_counts()
    if total ~= tonumber(row[2]) or done ~= (tonumber(row[3]) or 0) then
      redis.call('HSET', key, 'fw', string.format('%d', total), 'fd', string.format('%d', done))
      row[2], row[3] = string.format('%d', total), string.format('%d', done)
    end
  end
  -- the parent deleted by its own burial (a dead retention that keeps none): nothing more to record
  local gone = false
  for i, p in ipairs(list) do
    local field, policy, token, kind, body = fields[i], p[6], tonumber(p[7]), p[8], p[9]
    -- what the parent records: a death is read by the child's policy
    if kind == 'd' then
      if policy == 'f' then kind = 'f' elseif policy == 'r' then kind = 'x' end
    end
    if kind == 'x' or kind == 'p' then body = '' end
    local old = current[field]
    local value = p[7] .. '|' .. kind .. '|' .. body
    if not state then
      -- no parent row: its news waits in its children hash (expiring unless its enqueue comes)
      if child_news(token, kind, old) then
        current[field], changed[field] = value, value
      end
    elseif total and old and child_news(token, kind, old) then
      local _, old_kind = child_record(old)
      local was = child_done(old_kind)
      if kind == 'x' then
        current[field], changed[field] = false, false
        total = total - 1
        if was then done = done - 1 end
      else
        current[field], changed[field] = value, value
        local is = child_done(kind)
        if is and not was then done = done + 1 elseif was and not is then done = done - 1 end
      end
      if kind == 'f' and state == 'waiting' then
        -- recorded first: the burial may delete the row and its children hash (trim_dead)
        flush()
        write_counts()
        fail_parent(pid, field, body, now)
        state = 'dead'
        row[4] = field
        if redis.call('EXISTS', key) == 0 then
          gone = true
          break
        end
      elseif kind == 'p' and state == 'dead' and row[4] == field then
        -- the child that failed it runs again: the parent waits again, unless another failed it too
        flush()
        local other = nil
        local flat = redis.call('HGETALL', kids)
        for j = 1, #flat, 2 do
          local _, k = child_record(flat[j + 1])
          if k == 'f' then
            other = flat[j]
            break
          end
        end
        if other then
          redis.call('HSET', key, 'fx', other)
          row[4] = other
        else
          redis.call('ZREM', K_DEAD, pid)
          redis.call('HSET', key, 's', 'waiting')
          redis.call('HDEL', key, 'fx', 'f')
          redis.call('ZADD', K_WAITING, now, pid)
          collect_event('waiting', pid, 'g', row[5], 'n', total)
          state = 'waiting'
          row[4] = false
        end
      end
    end
  end
  if gone then
    changed = {}
  else
    flush()
  end
  if not state then
    redis.call('PEXPIRE', kids, ORPHAN_MS)
  elseif total and not gone then
    write_counts()
    if state == 'waiting' and done >= total then
      if release_parent(pid, row[5], row[6], total) then claimable = true end
      released = released + 1
    end
  end
end
if claimable then ring_doorbell() end
flush_events()
return { #entries, released }
`,
  },
  getJob: {
    name: "getJob",
    sha1: "ad5b205717aab36f56fdefde332063d4daafac7b",
    lua: `--[[
  get-job: one job's row.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  Derives  emq:{q}:job:<id>, emq:{q}:kids:<id>
  Reply    the row as a flat field/value list (with the defaults of the fields enqueue leaves
           out written in: \`m\`, \`b\`), plus its lease deadline ("lease") when active or its
           due time ("due") when scheduled, under names no row field has (the row's \`r\` is
           its result), and for a flow parent its children ("kids": its children hash as
           JSON, a flat list, includes/child_record.lua), for a job with durable steps its steps
           ("steps": its steps hash as JSON, a flat list, docs/design/steps.md), and while it
           waits for an event its timeout ("timeout", absent for none); {} when there is no such job
  Errors   EMQKIND
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- A row as HGETALL returned it (a flat field/value list), with the defaults written out for the
-- fields enqueue leaves out (\`m\`, \`b\`), so a reader of get-job or list-dead sees every field.
local function with_defaults(row)
  local has = {}
  for i = 1, #row, 2 do has[row[i]] = true end
  if not has['m'] then
    row[#row + 1] = 'm'
    row[#row + 1] = tostring(DEFAULT_MAX_ATTEMPTS)
  end
  if not has['b'] then
    row[#row + 1] = 'b'
    row[#row + 1] = DEFAULT_BACKOFF
  end
  return row
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end

local id = ARGV[2]
check_kind(id)
local row = redis.call('HGETALL', job_key(id))
if #row == 0 then return row end
with_defaults(row)
local state, parent, steps = nil, false, false
for i = 1, #row, 2 do
  if row[i] == 's' then state = row[i + 1] end
  if row[i] == 'fw' then parent = true end
  if row[i] == 'sn' then steps = true end
end
if steps then
  row[#row + 1] = 'steps'
  row[#row + 1] = cjson.encode(redis.call('HGETALL', step_key(id)))
end
if parent then
  row[#row + 1] = 'kids'
  row[#row + 1] = cjson.encode(redis.call('HGETALL', kids_key(id)))
end
if state == 'active' then
  row[#row + 1] = 'lease'
  row[#row + 1] = redis.call('ZSCORE', K_ACTIVE, id)
elseif state == 'scheduled' then
  row[#row + 1] = 'due'
  row[#row + 1] = redis.call('ZSCORE', K_SCHEDULED, id)
elseif state == 'awaiting' then
  local timeout = redis.call('ZSCORE', PREFIX .. 'awaiting', id)
  if timeout and timeout ~= 'inf' then
    row[#row + 1] = 'timeout'
    row[#row + 1] = timeout
  end
end
return row
`,
  },
  getScheduler: {
    name: "getScheduler",
    sha1: "5c127b76bb30e6e667458bdd25508e03a1347e79",
    lua: `--[[
  get-scheduler: one scheduler's row and the server's time, read together (an upsert works out
  its next slot from both).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  scheduler id
  Derives  emq:{q}:scheduler:<id>
  Reply    {now, row as a flat field/value list ({} when there is no such scheduler)}
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of scheduler \`id\`: emq:{q}:scheduler:<id> (a hash, docs/design.md "Schedulers").
local function scheduler_key(id)
  return PREFIX .. 'scheduler:' .. id
end

return { now_ms(), redis.call('HGETALL', scheduler_key(ARGV[2])) }
`,
  },
  groupLimit: {
    name: "groupLimit",
    sha1: "c01e6e99d380bd07233b85c8efb0b24833994682",
    lua: `--[[
  group-limit: set group g's limit on active jobs, or lift it. Lowering it below the jobs already
  active takes nothing back: no new claim until the group is below it.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  ARGV[3]  limit (>= 0), or -1 to lift it
  Derives  emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1
  Events   \`limit\` (g, l: the limit, '' lifted) when the limit changed (setting the one it has, or
           lifting none, appends nothing)
  Errors   EMQARG
  Rings    the doorbell when the change put the lane back on the ring
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- Put ring entry g on the ring, or take it off, to match whether it is serviceable now; \`on_ring\`
-- says whether it is on the ring before (for a group the script has just changed, whether it was
-- serviceable: the ring holds exactly the serviceable entries). Joining rings the doorbell, as
-- the lane's work just became claimable.
local function match_ring(g, on_ring)
  local serviceable = lane_serviceable(g)
  if serviceable and not on_ring then
    redis.call('RPUSH', K_RING, g)
    ring_doorbell()
  elseif on_ring and not serviceable then
    redis.call('LREM', K_RING, 0, g)
  end
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end
-- Turn hash \`key\` into Redis's hashtable encoding for good: a field written with a value longer
-- than hash-max-listpack-value (64 by default) converts it, and deleting that field does not
-- convert it back (Redis never packs a hash again while it exists), so nothing stays behind for
-- any reader to skip. Redis keeps a hash of up to 128 fields as a listpack, one packed list that
-- every HGET, HMGET field and HSET walks: the groups' limits and active counts of a queue of 100
-- groups, read and written a field per group at every claim and settle, cost a grouped drain 11%
-- of its instructions that way (bench:instructions drain-groups). On a server that packs nothing
-- the two commands change nothing. The field \`~\` is no group name (src/keyspace.ts NAME).
-- Callers convert a hash once it holds HASH_AS_TABLE_FIELDS fields or more: below that a walk of
-- the packed list costs about what a hashtable's lookup does, and a queue of a few groups keeps
-- its small hashes small.
local HASH_AS_TABLE_FIELDS = 16
local HASH_AS_TABLE_VALUE = '~ a value over 64 bytes: writing it makes this hash a hashtable for good ~'
local function hash_as_table(key)
  redis.call('HSET', key, '~', HASH_AS_TABLE_VALUE)
  redis.call('HDEL', key, '~')
end

local g = ARGV[2]
local limit = arg_int(ARGV[3], 'limit', -1)
local was = redis.call('HGET', K_GLIMIT, g)
local set = limit >= 0 and string.format('%d', limit) or false
if was == set then return 1 end
local before = lane_serviceable(g)
if set then
  redis.call('HSET', K_GLIMIT, g, set)
  -- every claim and settle of a limited group reads its limit: many of them, from a hashtable
  if redis.call('HLEN', K_GLIMIT) >= HASH_AS_TABLE_FIELDS then hash_as_table(K_GLIMIT) end
else
  redis.call('HDEL', K_GLIMIT, g)
end
match_ring(g, before)
emit('limit', nil, 'g', g, 'l', set or '')
return 1
`,
  },
  holdGroup: {
    name: "holdGroup",
    sha1: "20f706003e855d13887ac84a364f0e500db5fc90",
    lua: `--[[
  hold-group: no job of ring entry g (a group, or "*" for ungrouped work) starts for \`ms\` from now,
  on the server's clock (after a 429 from what its jobs call, say); other entries keep flowing.
  A hold already longer is kept; its leased jobs finish normally and new jobs still enter its lane.
  Sent again (a lost reply), it holds until \`ms\` after the repeat: a few ms more, nothing else.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the entry: a group, or "*"
  ARGV[3]  ms (>= 1)
  Derives  emq:{q}:holds
  Reply    the time the entry is held until (server ms)
  Events   \`held\` (g for a group, u until when)
  Errors   EMQARG
  Rings    the schedule bell when the hold's end is the queue's next due time
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- The earliest next slot of any scheduler (ms), or -1 when none will fire: a scheduler that fires
-- no more waits in \`schedulers\` with the score +inf, which Redis answers as "inf". A queue that
-- never made a scheduler (meta \`sc\` unset) has none: nothing is read.
local function first_slot()
  if not queue_meta().sc then return -1 end
  local score = redis.call('ZRANGE', K_SCHEDULERS, 0, 0, 'WITHSCORES')[2]
  if score == nil or score == 'inf' then return -1 end
  return tonumber(score)
end
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then. The throttled entries are read only once
-- any was (meta \`th\`), the waits' timeouts once a step was (meta \`st\`).
-- The earliest timeout of a wait for an event (a wait without one scores +inf): -1 for none.
local function first_timeout()
  local at = tonumber(redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  return at or -1
end
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), queue_meta().th and first_score(K_THROTTLED) or -1,
    queue_meta().st and first_timeout() or -1 }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- The schedule bell for a time \`at\` (ms) that was just written (a scheduler's next slot): when it
-- is now the next due time of the queue, push a token onto \`sched\` so a parked consumer re-reads
-- the next due time and sets its timer (a slot already due runs a beat at once).
local function ring_sched_bell_at(at)
  if at >= 0 and next_due() == at then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
-- Throttle \`entry\` (a ring entry, or QUEUE_ENTRY) until \`at\` (ms): into K_THROTTLED at that score,
-- or at its later one if it is there already (a throttled entry is off the ring; the caller takes
-- it off). \`at\` is a due time the scripts know (includes/next_due.lua): when it is the queue's
-- next one the schedule bell rings, so parked consumers set their timers for it. The queue's
-- first throttle sets meta \`th\`, under which the scripts read \`throttled\` at all.
local function throttle(entry, at)
  mark_feature('th')
  redis.call('ZADD', K_THROTTLED, 'GT', string.format('%d', at), entry)
  ring_sched_bell_at(at)
end
-- Hold ring entry \`entry\` (a group, or UNGROUPED) until \`until_ms\` (server ms), or until the end of
-- a longer hold it has: its hold in K_HOLDS, the entry throttled until then and off the ring.
-- Returns the time it is held until.
local function hold_entry(entry, until_ms)
  local held = tonumber(redis.call('HGET', K_HOLDS, entry)) or 0
  if until_ms > held then
    held = until_ms
    redis.call('HSET', K_HOLDS, entry, string.format('%d', held))
  end
  throttle(entry, held)
  redis.call('LREM', K_RING, 0, entry)
  return held
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end

local entry = ARGV[2]
local ms = arg_int(ARGV[3], 'ms', 1)
local held = hold_entry(entry, now_ms() + ms)
emit('held', nil, 'g', entry ~= UNGROUPED and entry or nil, 'u', string.format('%d', held))
return held
`,
  },
  listDead: {
    name: "listDead",
    sha1: "a880890c41200093f2f19f31a142ee9fa2c83673",
    lua: `--[[
  list-dead: the most recently buried jobs, newest first.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  offset (>= 0)
  ARGV[3]  limit (>= 1)
  Derives  emq:{q}:job:<id>
  Reply    { {id, field, value, ...}, ... }, each row with its defaults written in (as get-job)
  Errors   EMQARG
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- A row as HGETALL returned it (a flat field/value list), with the defaults written out for the
-- fields enqueue leaves out (\`m\`, \`b\`), so a reader of get-job or list-dead sees every field.
local function with_defaults(row)
  local has = {}
  for i = 1, #row, 2 do has[row[i]] = true end
  if not has['m'] then
    row[#row + 1] = 'm'
    row[#row + 1] = tostring(DEFAULT_MAX_ATTEMPTS)
  end
  if not has['b'] then
    row[#row + 1] = 'b'
    row[#row + 1] = DEFAULT_BACKOFF
  end
  return row
end

local offset = arg_int(ARGV[2], 'offset', 0)
local limit = arg_int(ARGV[3], 'limit', 1)
local reply = {}
for _, id in ipairs(redis.call('ZREVRANGE', K_DEAD, offset, offset + limit - 1)) do
  local entry = redis.call('HGETALL', job_key(id))
  if #entry > 0 then with_defaults(entry) end
  table.insert(entry, 1, id)
  reply[#reply + 1] = entry
end
return reply
`,
  },
  listGroups: {
    name: "listGroups",
    sha1: "68bc9c0bcaa326aa20bd5ed9a056b3d1ec1a4a89",
    lua: `--[[
  list-groups: one page of the queue's groups (emq:{q}:groups: every group that ever had a lane),
  each with its numbers, for a reader (the HTTP API, the dashboard, \`emq groups\`). A walk by SSCAN:
  a group may come again on a later page (the set was rehashed meanwhile), and one added during the
  walk may come or not. SSCAN is asked again (COUNT \`count\`) while the page holds fewer than \`count\`
  groups, at most 10 times: a prefix few groups match still fills its pages, and a page never
  scans more than about 10 * \`count\` members. A small set (listpack or intset) comes whole at once.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the SSCAN cursor: "0" to start, else the one the page before answered
  ARGV[3]  count (1 to 1000): SSCAN's COUNT, about the most groups a page holds
  ARGV[4]  a group name prefix, "" for every group: letters, digits and \`._-\` (no glob character,
           so MATCH \`<prefix>*\` needs no escaping)
  Derives  emq:{q}:grate, emq:{q}:holds, emq:{q}:lane:<group>, emq:{q}:fifo:<group>
  Reply    {next cursor ("0": the walk is done), {group, active, limit, rate, paused, held until,
           throttled until, lane zset size, arrivals list size}, ...}, the rows sorted by name;
           active "0" when none is counted; limit, rate ("limit:periodMs"), held until and throttled
           until "" for none; paused 1 or 0
  Errors   EMQARG
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- How many claimable jobs ring entry g holds: its zset's and its arrivals list's, in that order.
local function lane_size(g)
  return redis.call('ZCARD', lane_key(g)), redis.call('LLEN', fifo_key(g))
end

local cursor = ARGV[2]
-- a cursor Redis would refuse with its own error (an unsigned 64-bit integer)
if not string.match(cursor, '^%d+$') or #cursor > 20 or (#cursor == 20 and cursor > '18446744073709551615') then
  error(redis.error_reply('EMQARG cursor must be a cursor a page answered, got ' .. cursor))
end
local count = arg_int(ARGV[3], 'count', 1)
if count > 1000 then error(redis.error_reply('EMQARG count must be an integer from 1 to 1000, got ' .. ARGV[3])) end
local name_prefix = ARGV[4]
if not string.match(name_prefix, '^[%w._-]*$') or #name_prefix > 128 then
  error(redis.error_reply('EMQARG prefix must be up to 128 letters, digits, ., _ or -, got ' .. name_prefix))
end

local names, seen = {}, {}
for _ = 1, 10 do
  local scan
  if name_prefix == '' then
    scan = redis.call('SSCAN', K_GROUPS, cursor, 'COUNT', count)
  else
    scan = redis.call('SSCAN', K_GROUPS, cursor, 'MATCH', name_prefix .. '*', 'COUNT', count)
  end
  cursor = scan[1]
  for _, g in ipairs(scan[2]) do
    if not seen[g] then
      seen[g] = true
      names[#names + 1] = g
    end
  end
  if cursor == '0' or #names >= count then break end
end
table.sort(names)

local rows = {}
for i, g in ipairs(names) do
  local zset, list = lane_size(g)
  local throttled = redis.call('ZSCORE', K_THROTTLED, g)
  rows[i] = {
    g,
    redis.call('HGET', K_GACTIVE, g) or '0',
    redis.call('HGET', K_GLIMIT, g) or '',
    redis.call('HGET', K_GRATE, g) or '',
    redis.call('SISMEMBER', K_GPAUSED, g),
    redis.call('HGET', K_HOLDS, g) or '',
    throttled and string.format('%d', tonumber(throttled)) or '',
    zset,
    list,
  }
end
return { cursor, rows }
`,
  },
  listJobs: {
    name: "listJobs",
    sha1: "d41b912a276cb8139dbbca39841a4016c412279d",
    lua: `--[[
  list-jobs: a page of the jobs in one state, in that state's order:
    pending    lane by lane, ungrouped work first, then the groups by name; within a lane in the
               order a claim takes them (priority, then arrival; a job back in its place after a
               run where it was). Which lane a claim serves next turns with the ring, so this is
               each lane's order, not one global one.
    scheduled  by due time, soonest first
    active     by lease deadline, soonest first
    completed  most recently finished first (emq:{q}:completed); a row that expired since its
               entry was written, or whose id was enqueued again, is left out, so a page may hold
               fewer than \`limit\`
    dead       most recently buried first (as list-dead)
    waiting    flow parents waiting for their children, longest waiting first

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  state: pending | scheduled | active | completed | dead | waiting | awaiting (an event)
  ARGV[3]  offset (>= 0)
  ARGV[4]  limit (>= 1)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    { {id, field, value, ...}, ... }, each row with its defaults written in (as get-job),
           plus its lease deadline ("lease") when active or its due time ("due") when scheduled
  Cost     one ZRANGE (or LRANGE) and one HGETALL a job; pending also sizes every lane (two
           commands a group) to find where the page starts
  Errors   EMQARG (an unknown state, a malformed number)
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The active zset kept in Redis's skiplist encoding. Redis keeps a zset of at most 128 members
-- (zset-max-listpack-entries) as a listpack, where each ZADD or ZREM of a member walks the whole
-- list: a drain that claims and completes 100 jobs a call into a zset of about 100 spent some
-- 24k of its 137k instructions a job there (callgrind; 6k as a skiplist). A member longer than
-- 64 bytes (zset-max-listpack-value) makes the zset a skiplist and keeps it one, so a claim of
-- ACTIVE_SKIPLIST_BATCH jobs or more adds this member, first in its ZADD (a new zset's encoding
-- follows the first member), scored +inf: no lease ever ends there, so the reads by deadline
-- (reap's expired range) never see it, and the reads of the leases go up to, not including, +inf
-- (first_lease, lease_count, the listings). It is not a job id (ids are "JOB:..."); the keyspace
-- checker allows it and nothing else that is not a leased job (docs/design/keyspace.md).
local ACTIVE_SKIPLIST_MEMBER = '~ keeps this zset a skiplist: a listpack zset walks all its members on each ZADD and ZREM ~'
local ACTIVE_SKIPLIST_BATCH = 32
-- The earliest lease deadline (ms), -1 for none.
local function first_lease()
  return tonumber(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]) or -1
end
-- How many jobs are leased.
local function lease_count()
  return redis.call('ZCOUNT', K_ACTIVE, '-inf', '(+inf')
end
-- The leased jobs from the \`offset\`th soonest deadline on, at most \`limit\` (ids and deadlines,
-- flat, as ZRANGE WITHSCORES answers; ids only without \`scores\`).
local function lease_range(offset, limit, scores)
  if scores then
    return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', offset, limit)
  end
  return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'LIMIT', offset, limit)
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- A row as HGETALL returned it (a flat field/value list), with the defaults written out for the
-- fields enqueue leaves out (\`m\`, \`b\`), so a reader of get-job or list-dead sees every field.
local function with_defaults(row)
  local has = {}
  for i = 1, #row, 2 do has[row[i]] = true end
  if not has['m'] then
    row[#row + 1] = 'm'
    row[#row + 1] = tostring(DEFAULT_MAX_ATTEMPTS)
  end
  if not has['b'] then
    row[#row + 1] = 'b'
    row[#row + 1] = DEFAULT_BACKOFF
  end
  return row
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- How many claimable jobs ring entry g holds: its zset's and its arrivals list's, in that order.
local function lane_size(g)
  return redis.call('ZCARD', lane_key(g)), redis.call('LLEN', fifo_key(g))
end
-- A lane's one order over its two parts, from their heads as read: \`z\`, a zset's ZRANGE WITHSCORES
-- (id, score, ...), and \`f\`, its arrivals list's LRANGE, whose members' orders are their rows' \`o\`;
-- the lower order goes first. Takes up to \`count\` ids from both in that order, and returns them,
-- their orders (nil where it is the row's \`o\`: a list member's), and how many of each part it
-- took. pop_lane pops what it took; lane_range pages through it. A row read only for a mix of
-- both parts.
local function merge_lane(z, f, count)
  local ids, orders = {}, {}
  local zi, fi, f_order = 1, 1, nil
  while #ids < count and (zi <= #z or fi <= #f) do
    if fi <= #f and not f_order then f_order = tonumber(redis.call('HGET', job_key(f[fi]), 'o')) or 0 end
    if zi <= #z and (fi > #f or tonumber(z[zi + 1]) < f_order) then
      ids[#ids + 1] = z[zi]
      orders[#ids] = z[zi + 1]
      zi = zi + 2
    else
      ids[#ids + 1] = f[fi]
      fi = fi + 1
      f_order = nil
    end
  end
  return ids, orders, (zi - 1) / 2, fi - 1
end
-- The ids of ring entry g's claimable jobs at positions [skip, skip + count) of the order a claim
-- takes them: its zset (zn members) and its arrivals list (fn) as one order, the zset's scores
-- against the list members' rows' \`o\` (see pop_lane). Where the two parts split at \`skip\` is
-- found by a binary search (a ZRANGE, a LINDEX and an HGET a step), so a page far down a long lane
-- reads its own entries and a few probes, never the entries before it. A lane with one part empty
-- (the usual case: no zset) is one LRANGE or ZRANGE.
local function lane_range(g, skip, count, zn, fn)
  local zkey, fkey = lane_key(g), fifo_key(g)
  if zn == 0 then return redis.call('LRANGE', fkey, skip, skip + count - 1) end
  if fn == 0 then return redis.call('ZRANGE', zkey, skip, skip + count - 1) end
  local function zorder(i)
    return tonumber(redis.call('ZRANGE', zkey, i, i, 'WITHSCORES')[2])
  end
  local function forder(j)
    return tonumber(redis.call('HGET', job_key(redis.call('LINDEX', fkey, j)), 'o')) or 0
  end
  -- i: how many of the first \`skip\` jobs come from the zset (j = skip - i from the list)
  local lo, hi = math.max(0, skip - fn), math.min(skip, zn)
  local i = lo
  while lo <= hi do
    i = math.floor((lo + hi) / 2)
    local j = skip - i
    if i < zn and j > 0 and forder(j - 1) > zorder(i) then
      lo = i + 1
    elseif i > 0 and j < fn and zorder(i - 1) > forder(j) then
      hi = i - 1
    else
      break
    end
  end
  local j = skip - i
  local z = redis.call('ZRANGE', zkey, i, i + count - 1, 'WITHSCORES')
  local f = redis.call('LRANGE', fkey, j, j + count - 1)
  return (merge_lane(z, f, count))
end

local state = ARGV[2]
local offset = arg_int(ARGV[3], 'offset', 0)
local limit = arg_int(ARGV[4], 'limit', 1)
local last = offset + limit - 1

-- ids, and each one's score as the field the row reads it under ('lease' or 'due'), when it has one
local ids, scores, field = {}, {}, nil
local function scored(list)
  for i = 1, #list, 2 do
    ids[#ids + 1] = list[i]
    scores[#ids] = list[i + 1]
  end
end
if state == 'scheduled' then
  field = 'due'
  scored(redis.call('ZRANGE', K_SCHEDULED, offset, last, 'WITHSCORES'))
elseif state == 'active' then
  field = 'lease'
  scored(lease_range(offset, limit, true))
elseif state == 'dead' then
  ids = redis.call('ZREVRANGE', K_DEAD, offset, last)
elseif state == 'completed' then
  ids = redis.call('ZREVRANGE', K_COMPLETED, offset, last)
elseif state == 'waiting' then
  ids = redis.call('ZRANGE', K_WAITING, offset, last)
elseif state == 'awaiting' then
  ids = redis.call('ZRANGE', PREFIX .. 'awaiting', offset, last)
elseif state == 'pending' then
  local entries = redis.call('SMEMBERS', K_GROUPS)
  table.sort(entries)
  table.insert(entries, 1, UNGROUPED)
  local skip, need = offset, limit
  for _, g in ipairs(entries) do
    if need == 0 then break end
    local zn, fn = lane_size(g)
    if skip >= zn + fn then
      skip = skip - zn - fn
    else
      for _, id in ipairs(lane_range(g, skip, math.min(need, zn + fn - skip), zn, fn)) do
        ids[#ids + 1] = id
        need = need - 1
      end
      skip = 0
    end
  end
else
  error(redis.error_reply('EMQARG state must be pending, scheduled, active, completed, dead, waiting or awaiting, got ' .. tostring(state)))
end

local reply = {}
for i, id in ipairs(ids) do
  local row = redis.call('HGETALL', job_key(id))
  local s
  for k = 1, #row, 2 do
    if row[k] == 's' then s = row[k + 1] end
  end
  -- the completed index may name a row gone (expired) or moved on (its id enqueued again)
  if s == state then
    with_defaults(row)
    if field then
      row[#row + 1] = field
      row[#row + 1] = scores[i]
    end
    table.insert(row, 1, id)
    reply[#reply + 1] = row
  end
end
return reply
`,
  },
  listQueues: {
    name: "listQueues",
    sha1: "9e9b43c127e533bd182693c4a3a3f744a4eb1cc2",
    lua: `--[[
  list-queues: the names in the registry of queues, sorted, and the partitioned ones' counts.

  KEYS[1]  emq:queues (set of names)
  KEYS[2]  {emq:queues}:partitions (hash: name -> count of partitions)
  ARGV     none
  Reply    {{name, ...}, {name, count, ...}}
]]
local names = redis.call('SMEMBERS', KEYS[1])
table.sort(names)
return {names, redis.call('HGETALL', KEYS[2])}
`,
  },
  listSchedulers: {
    name: "listSchedulers",
    sha1: "419f259300f4e5e5f0e8e03688e810ce3ccb31a9",
    lua: `--[[
  list-schedulers: a page of the queue's schedulers, soonest next slot first (those that fire no
  more last, by id).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  offset (>= 0)
  ARGV[3]  limit (>= 1)
  Derives  emq:{q}:scheduler:<id>
  Reply    {id, row (a flat field/value list), id, row, ...}
  Errors   EMQARG
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The row of scheduler \`id\`: emq:{q}:scheduler:<id> (a hash, docs/design.md "Schedulers").
local function scheduler_key(id)
  return PREFIX .. 'scheduler:' .. id
end

local offset = arg_int(ARGV[2], 'offset', 0)
local limit = arg_int(ARGV[3], 'limit', 1)
local reply = {}
for _, id in ipairs(redis.call('ZRANGE', K_SCHEDULERS, offset, offset + limit - 1)) do
  reply[#reply + 1] = id
  reply[#reply + 1] = redis.call('HGETALL', scheduler_key(id))
end
return reply
`,
  },
  moveGroup: {
    name: "moveGroup",
    sha1: "7b5c832bbcec38d60adacb520a50d84b5b7f2bfe",
    lua: `--[[
  move-group: move a pending job to another group's lane, or out of any group; it keeps its place
  in order. The lane it left leaves the ring when emptied.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  ARGV[3]  the new group ("" = ungrouped)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1 moved, 0 no such job, -1 the job is not pending
  Errors   EMQKIND
  Rings    the doorbell when it is claimable in its new place
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- Ring entry g may have stopped being serviceable (its lane emptied, it was paused, its limit
-- was lowered): take it off the ring if so.
local function leave_ring(g)
  if not lane_serviceable(g) then redis.call('LREM', K_RING, 0, g) end
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- admit for one job going back in its place (reprocess, a move between groups): into ring entry
-- g's zset at its order \`score\`. Returns true when it is claimable now.
local function admit_one(g, score, id)
  local batch = { order = {} }
  batch_push(batch, g, score, id)
  return admit(batch)
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end

local id, to = ARGV[2], ARGV[3]
check_kind(id)
local key = job_key(id)
local r = redis.call('HMGET', key, 's', 'g', 'o')
if not r[1] then return 0 end
if r[1] ~= 'pending' then return -1 end
local from = r[2] or UNGROUPED
-- the order is the zset score, or the row's \`o\` for a job in an arrivals list; in its new lane
-- the job goes in the zset at that order (a list takes only newer orders than its own)
local order = redis.call('ZSCORE', lane_key(from), id)
if order then
  redis.call('ZREM', lane_key(from), id)
else
  order = r[3]
  redis.call('LREM', fifo_key(from), 1, id)
end
leave_ring(from)
if to == '' then
  redis.call('HDEL', key, 'g')
else
  redis.call('HSET', key, 'g', to)
end
if admit_one(to, order, id) then ring_doorbell() end
return 1
`,
  },
  obliterate: {
    name: "obliterate",
    sha1: "a7d877e33cf7d151dc2209c62436533144f81efc",
    lua: `--[[
  obliterate: delete the whole queue, at most n rows a call: one chunk of Queue.obliterate, which
  calls again until it answers done, then takes the name out of the registry of queues
  (unregister-queue: that key is outside the queue's slot). The first call pauses the queue, so
  nothing is claimed while it goes. Refused, writing nothing, while jobs are active, unless forced.
  The schedulers go first (a scheduler row counts as a row), so no slot fires into a queue being
  deleted; then the active rows (their slots freed, so the group counts stay true), and their
  holders are fenced off (a settle finds no row). Then scheduled, dead and completed rows, then
  every lane (ungrouped, then each group, which leaves emq:{q}:groups when its lane is empty),
  and last, once no row is left, every fixed key (the events stream among them), the per-minute
  buckets, the rate limits, their starts logs and the holds. It appends no
  event (the stream goes with the rest). The state between two calls is a smaller, paused queue:
  the keyspace checker holds at every step.
  Enqueue request records (emq:{q}:req:*) are not indexed anywhere: they are left to expire
  (their TTL is at most the queue's idempotencyTtlMs). Each row deleted releases its dedupe key
  (emq:{q}:dd:<key>, includes/delete_rows.lua).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  "1": go even while jobs are active; "0": refuse then
  ARGV[3]  n (>= 1): the most rows this call deletes (a group visited counts as one)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:scheduler:<id>,
           emq:{q}:minutes
  Reply    {1 done | 0 more to do | -1 refused: jobs are active, rows deleted (or, refused, the
           number of active jobs), {flow news: outbox entries for the caller to relay}}: the
           rows of flow jobs deleted tell their parents and children (includes/delete_rows.lua),
           and the last chunk hands back the outbox's entries left unrelayed. Sent again it goes on, or answers done: harmless twice
  Errors   EMQARG (a malformed number), before anything is written
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The active zset kept in Redis's skiplist encoding. Redis keeps a zset of at most 128 members
-- (zset-max-listpack-entries) as a listpack, where each ZADD or ZREM of a member walks the whole
-- list: a drain that claims and completes 100 jobs a call into a zset of about 100 spent some
-- 24k of its 137k instructions a job there (callgrind; 6k as a skiplist). A member longer than
-- 64 bytes (zset-max-listpack-value) makes the zset a skiplist and keeps it one, so a claim of
-- ACTIVE_SKIPLIST_BATCH jobs or more adds this member, first in its ZADD (a new zset's encoding
-- follows the first member), scored +inf: no lease ever ends there, so the reads by deadline
-- (reap's expired range) never see it, and the reads of the leases go up to, not including, +inf
-- (first_lease, lease_count, the listings). It is not a job id (ids are "JOB:..."); the keyspace
-- checker allows it and nothing else that is not a leased job (docs/design/keyspace.md).
local ACTIVE_SKIPLIST_MEMBER = '~ keeps this zset a skiplist: a listpack zset walks all its members on each ZADD and ZREM ~'
local ACTIVE_SKIPLIST_BATCH = 32
-- The earliest lease deadline (ms), -1 for none.
local function first_lease()
  return tonumber(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]) or -1
end
-- How many jobs are leased.
local function lease_count()
  return redis.call('ZCOUNT', K_ACTIVE, '-inf', '(+inf')
end
-- The leased jobs from the \`offset\`th soonest deadline on, at most \`limit\` (ids and deadlines,
-- flat, as ZRANGE WITHSCORES answers; ids only without \`scores\`).
local function lease_range(offset, limit, scores)
  if scores then
    return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', offset, limit)
  end
  return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'LIMIT', offset, limit)
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- A row with durable steps (its \`sn\`) about to be deleted takes its steps with it
-- (docs/design/steps.md): its steps hash, its place among the sleepers and the jobs awaiting an
-- event, and among its wait's waiters (\`wk\`, the row's, nil when it waits for none).
local function forget_steps(id, wk)
  redis.call('DEL', step_key(id))
  redis.call('ZREM', PREFIX .. 'sleeping', id)
  redis.call('ZREM', PREFIX .. 'awaiting', id)
  if wk then redis.call('ZREM', wk, id) end
end
-- Delete the rows of jobs \`ids\`, one DEL per 1000 (Lua's unpack has a limit), releasing each
-- one's dedupe key (\`dk\`, either mode) while it still names the job. Only in a queue where a job
-- ever took a key (meta \`dd\`, asked once a call) is each row's \`dk\` read: a queue that never used
-- deduplication pays one HMGET a call, not a command a row. Likewise in a queue where a job of a
-- flow was ever written (meta \`fl\`), each row's links are read and settled (forget_flow: a child
-- tells its parent, a parent has its unfinished children removed, through the outbox), and in a
-- queue where a step was ever recorded (meta \`st\`), each row's steps go with it (forget_steps).
local dedupe_used, flows_used, steps_used = nil, nil, nil
local function delete_rows(ids)
  if #ids == 0 then return end
  if dedupe_used == nil then
    local m = redis.call('HMGET', K_META, 'dd', 'fl', 'st')
    dedupe_used, flows_used, steps_used = m[1] ~= false, m[2] ~= false, m[3] ~= false
  end
  local keys = {}
  local now = flows_used and now_ms() or 0
  for i, id in ipairs(ids) do
    keys[i] = job_key(id)
    if flows_used then
      local r = redis.call('HMGET', keys[i], 'dk', 's', 'fp', 'fw', 't')
      release_dedupe(id, r[1])
      if r[3] or r[4] then forget_flow(id, r[2], r[3], r[4], r[5], now) end
    elseif dedupe_used then
      release_dedupe(id, redis.call('HGET', keys[i], 'dk'))
    end
    if steps_used then
      local s = redis.call('HMGET', keys[i], 'sn', 'wk')
      if s[1] then forget_steps(id, s[2]) end
    end
  end
  for i = 1, #keys, 1000 do redis.call('DEL', unpack(keys, i, math.min(i + 999, #keys))) end
end
-- Count \`g\` once in \`tally\`, {order = {groups in first-seen order}, [g] = count}: settling a
-- batch frees each group's slots in one step (free_slots) instead of one per job.
local function tally(t, g)
  if not g or g == '' then return end
  if not t[g] then
    t[g] = 0
    t.order[#t.order + 1] = g
  end
  t[g] = t[g] + 1
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- The entries of \`entries\` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- Ring entry g may have stopped being serviceable (its lane emptied, it was paused, its limit
-- was lowered): take it off the ring if so.
local function leave_ring(g)
  if not lane_serviceable(g) then redis.call('LREM', K_RING, 0, g) end
end
-- Delete up to \`budget\` of ring entry g's claimable jobs, rows and all (its zset's first, then its
-- arrivals list's), and take the entry off the ring when that emptied its lane. Returns how many
-- went.
local function drop_lane(g, budget)
  if budget <= 0 then return 0 end
  local ids = {}
  local popped = redis.call('ZPOPMIN', lane_key(g), string.format('%d', budget))
  for p = 1, #popped, 2 do ids[#ids + 1] = popped[p] end
  if #ids < budget then
    for _, id in ipairs(redis.call('LPOP', fifo_key(g), string.format('%d', budget - #ids)) or {}) do ids[#ids + 1] = id end
  end
  if #ids == 0 then return 0 end
  delete_rows(ids)
  leave_ring(g)
  return #ids
end
-- The row of scheduler \`id\`: emq:{q}:scheduler:<id> (a hash, docs/design.md "Schedulers").
local function scheduler_key(id)
  return PREFIX .. 'scheduler:' .. id
end
-- The log of \`entry\`'s recent job starts (a zset: member a lease token, score the start's server
-- ms): emq:{q}:starts for the queue's own rate limit, emq:{q}:starts:<g> for group g's.
local function starts_key(entry)
  if entry == QUEUE_ENTRY then return PREFIX .. 'starts' end
  return PREFIX .. 'starts:' .. entry
end

local force = ARGV[2] == '1'
local n = arg_int(ARGV[3], 'n', 1)
if not force then
  local active = lease_count()
  if active > 0 then return { -1, active } end
end
redis.call('HSET', K_META, 'paused', '1')

local budget, deleted = n, 0
-- counts \`rows\` deleted and \`visits\` (a group visited) against the budget; true when it is spent
local function spend(rows, visits)
  deleted = deleted + rows
  budget = budget - rows - (visits or 0)
  return budget <= 0
end

-- the schedulers, so nothing fires meanwhile
local schedulers = redis.call('ZRANGE', K_SCHEDULERS, 0, budget - 1)
if #schedulers > 0 then
  for _, id in ipairs(schedulers) do redis.call('DEL', scheduler_key(id)) end
  chunked('ZREM', K_SCHEDULERS, schedulers)
  if spend(#schedulers) then return { 0, deleted, outbox_written } end
end

-- active rows, their group slots freed
local ids = lease_range(0, budget)
if #ids > 0 then
  local freed = { order = {} }
  for _, id in ipairs(ids) do tally(freed, redis.call('HGET', job_key(id), 'g')) end
  delete_rows(ids)
  chunked('ZREM', K_ACTIVE, ids)
  free_slots(freed)
  if spend(#ids) then return { 0, deleted, outbox_written } end
end

-- rows indexed by time; a completed entry whose id was enqueued again names a row in a lane,
-- which the lanes' turn deletes
for _, index in ipairs({ K_SCHEDULED, K_DEAD, K_COMPLETED, K_WAITING, PREFIX .. 'awaiting' }) do
  ids = redis.call('ZRANGE', index, 0, budget - 1)
  if #ids > 0 then
    local rows = ids
    if index == K_COMPLETED then
      rows = {}
      for _, id in ipairs(ids) do
        if redis.call('HGET', job_key(id), 's') == 'completed' then rows[#rows + 1] = id end
      end
    end
    delete_rows(rows)
    chunked('ZREM', index, ids)
    if spend(#ids) then return { 0, deleted, outbox_written } end
  end
end

if spend(drop_lane(UNGROUPED, budget)) then return { 0, deleted, outbox_written } end
while redis.call('SCARD', K_GROUPS) > 0 do
  for _, g in ipairs(redis.call('SRANDMEMBER', K_GROUPS, 100)) do
    -- out of budget with the lane not yet empty: the next call visits it again
    if spend(drop_lane(g, budget)) then return { 0, deleted, outbox_written } end
    redis.call('SREM', K_GROUPS, g)
    if spend(0, 1) then return { 0, deleted, outbox_written } end
  end
end

-- the rate limits and holds: a group's starts log exists only while it has a limit
for _, g in ipairs(redis.call('HKEYS', K_GRATE)) do redis.call('DEL', starts_key(g)) end
redis.call('DEL', K_THROTTLED, K_GRATE, K_HOLDS, starts_key(QUEUE_ENTRY))
-- flow news not yet relayed goes back with the reply, for the caller to relay, with this call's
local left = redis.call('ZRANGE', K_OUTBOX, 0, -1)
for _, e in ipairs(left) do outbox_written[#outbox_written + 1] = e end
redis.call('DEL', K_OUTBOX, K_WAITING)
-- durable steps' keys not held by a row (docs/design/steps.md): the events' names are in \`evnames\`
for _, name in ipairs(redis.call('SMEMBERS', PREFIX .. 'evnames')) do
  redis.call('DEL', PREFIX .. 'shapes:' .. name, PREFIX .. 'kept:' .. name, PREFIX .. 'keptd:' .. name)
end
redis.call('DEL', PREFIX .. 'evnames', PREFIX .. 'sleeping', PREFIX .. 'awaiting')
redis.call('DEL', K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE,
  K_GROUPS, K_SCHED, K_COMPLETED, K_EVENTS, K_SCHEDULERS, PREFIX .. 'fifo', K_MINUTES)
return { 1, deleted, outbox_written }
`,
  },
  pauseGroup: {
    name: "pauseGroup",
    sha1: "f45de90a6f325ab49b36532f500a8d0577030061",
    lua: `--[[
  pause-group: group g hands out nothing until resumed (its lane leaves the ring); its leased jobs
  finish normally and new jobs still enter its lane.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  Reply    1 paused now, 0 was already paused
  Events   \`group-paused\` (g) when it paused the group (not when it was paused already)
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end

local g = ARGV[2]
local paused = redis.call('SADD', K_GPAUSED, g)
if paused == 1 then
  redis.call('LREM', K_RING, 0, g)
  emit('group-paused', nil, 'g', g)
end
return paused
`,
  },
  pause: {
    name: "pause",
    sha1: "ae22b881728d65984e980b44af9f7965e628b204",
    lua: `--[[
  pause: the queue hands out nothing until resumed; leased jobs finish normally.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    1 paused now, 0 was already paused
  Events   \`paused\` when it paused the queue (not when it was paused already)
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end

local paused = redis.call('HSETNX', K_META, 'paused', 1)
if paused == 1 then emit('paused') end
return paused
`,
  },
  progress: {
    name: "progress",
    sha1: "40e1ae70dd8cbc219eec87c606e58b31bf68442d",
    lua: `--[[
  progress: write a leased job's progress into its row (\`pg\`), fenced on (id, token) like every
  settle: a holder whose lease was reaped, or whose job was removed, writes nothing.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the progress as JSON text, 1 to 4096 bytes (the core checks it is JSON: a number from
           0 to 100 or a small value)
  ARGV[3..] pairs: id, token (a BatchConsumer's batch writes one value to each of its jobs)
  Derives  emq:{q}:job:<id>
  Reply    {code, ...}: 1 written, 0 fenced off (the row is not active under that token: nothing
           written). The same call sent again (its reply lost) finds its value in the row and
           writes nothing, no event either, while the lease holds, and answers 0 once it does not
  Keeps    \`pg\` stays on the row as the job moves on (completed, retried, dead, given back) until
           a later run writes another or the row is deleted: the last progress any run reported
  Events   \`progress\` (j, g, a, p) per job whose progress changed, in one entry; a fenced-off job
           or a value the row holds already appends nothing
  Errors   EMQKIND, EMQARG, raised before anything is written
  Rings    never: nothing becomes claimable
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- The fence of complete: whether job \`id\` is active under lease token \`token\`. Returns {group or
-- nil, this run's attempt (\`a - z\`, a number, or the row's \`a\` as text when there is no \`z\`), its dedupe key \`dk\` or false, its key's ttl \`dt\` or false,
-- a flow child's parent \`fp\` or false, a flow parent's \`fw\` or false} when it is, for the settle,
-- its \`completed\` event, the key it releases (release_settled) and its flow links, else nil and
-- the row's state and \`t\` (false when absent), for each_held's repeat check. Reads the row in one
-- HMGET of the fields this call needs, worked out once (includes/queue_meta.lua): \`s\`, \`t\` and \`g\`;
-- \`a\` and \`z\` only while events are on (this run's attempt is only the events'); the dedupe and
-- flow fields only once the queue ever had them. A settling batch pays per job for every field it
-- asks for, there or not (the attempt is 0 with events off, the others false).
local held_fields, held_attempt, held_links = nil, nil, nil
local function held_run(id, token)
  if not held_fields then
    local meta = queue_meta()
    held_fields = { 's', 't', 'g' }
    if meta.ecap ~= '0' then
      held_attempt = #held_fields + 1
      held_fields[held_attempt], held_fields[held_attempt + 1] = 'a', 'z'
    end
    if meta.dd or meta.fl then
      held_links = #held_fields + 1
      for i, f in ipairs({ 'dk', 'dt', 'fp', 'fw' }) do held_fields[held_links + i - 1] = f end
    end
  end
  local r = redis.call('HMGET', job_key(id), unpack(held_fields))
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  -- the row's own text when no claim was given back (\`z\` absent): a Lua number is formatted as a
  -- float where the event writes it
  local attempt = 0
  if held_attempt then
    local z = r[held_attempt + 1]
    attempt = z and (tonumber(r[held_attempt]) or 0) - tonumber(z) or (r[held_attempt] or 0)
  end
  if not held_links then return { r[3] or nil, attempt, false, false, false, false } end
  local l = held_links
  return { r[3] or nil, attempt, r[l] or false, r[l + 1] or false, r[l + 2] or false, r[l + 3] or false }
end
-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index \`first\`, \`stride\` values
-- each. \`fence(id, token)\` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token (then the row's state
-- and \`t\` after it); \`act(id, held, i)\` settles a held job (\`held\` what fence returned, \`i\` the index
-- of its id, its other values after it) and returns its code. A job not held is left as it was:
-- its code is \`again(token, state, t)\` (nil for a settle without one: 0), the code a repeat of
-- this settle answers when the row shows it already ran under that token (its reply was lost and
-- the request sent again), else 0, fenced off. Returns the codes in ARGV order. The caller runs
-- the ids through check_kind before: the kind door's errors come before any write, and act writes.
local function each_held(first, stride, fence, act, again)
  local codes = {}
  for i = first, #ARGV, stride do
    local id, token = ARGV[i], ARGV[i + 1]
    local held, state, t = fence(id, token)
    if held then
      codes[#codes + 1] = act(id, held, i)
    elseif again then
      codes[#codes + 1] = again(token, state, t)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

local value = ARGV[2]
if type(value) ~= 'string' or #value == 0 or #value > 4096 then
  error(redis.error_reply('EMQARG progress must be 1 to 4096 bytes of JSON, got ' .. tostring(value and #value) .. ' bytes'))
end
for i = 3, #ARGV, 2 do check_kind(ARGV[i]) end
local codes = each_held(3, 2, held_run, function(id, run)
  local key = job_key(id)
  -- the value it holds already (this call sent again, or the same report twice): nothing to write
  if redis.call('HGET', key, 'pg') == value then return 1 end
  redis.call('HSET', key, 'pg', value)
  collect_event('progress', id, 'g', run[1], 'a', run[2], 'p', value)
  return 1
end)
flush_events()
return codes
`,
  },
  promote: {
    name: "promote",
    sha1: "a65e64a0f1e6b5f3e6ab2e7b6f658d8354a6aae2",
    lua: `--[[
  promote: scheduled jobs that are due move to their lane (or pending), earliest first, at most
  \`limit\` per call; and throttled entries that may start again go back on the ring
  (includes/readmit_due.lua), at most \`limit\` of them.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  limit (>= 1)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    {promoted, next due time still scheduled or -1}
  Events   \`promoted\` (j, g) per job, earliest first, in one entry
  Errors   EMQARG
  Rings    the doorbell when promoted or readmitted work is claimable
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- Rewrite step \`index\` of job \`id\` (its record, JSON: n name, k kind, s state, r result as JSON
-- text, e error, a attempts, st and ft started and finished ms, u until ms, ev event, ei the
-- event's id, cq and ci an invoked child) with \`fields\` set on it (a value false deletes the
-- field). Returns the record as written, nil when the job has no such step. Only the records a
-- suspension or its end rewrite come through here (a sleep's, a wait's, an invoke's): a run
-- step's result is written whole by step.lua, never decoded by a script.
local function step_update(id, index, fields)
  local key = step_key(id)
  local text = redis.call('HGET', key, index)
  if not text then return nil end
  local record = cjson.decode(text)
  for f, v in pairs(fields) do
    if v == false then record[f] = nil else record[f] = v end
  end
  redis.call('HSET', key, index, cjson.encode(record))
  return record
end
-- A suspended job goes back to be claimed (docs/design/steps.md): the step it waited on (its
-- row's \`sw\`, kind letter then index) is rewritten with \`fields\`, the row leaves its suspension
-- (\`sw\`, and \`wk\` the waiters zset of a wait, whose member it stops being), and it joins its lane
-- in its place (\`batch\`, admitted by the caller). \`row\` is {group or false, order} as read.
-- Collects a \`step\` event (j, g, n the step's name, s its new state).
local function resume_step(id, sw, wk, row, fields, batch)
  local key = job_key(id)
  local record = step_update(id, string.sub(sw, 2), fields)
  if wk then
    redis.call('ZREM', wk, id)
    redis.call('ZREM', PREFIX .. 'awaiting', id)
    redis.call('HDEL', key, 'sw', 'wk')
  else
    redis.call('HDEL', key, 'sw')
  end
  redis.call('HSET', key, 's', 'pending')
  batch_push(batch, row[1], row[2], id)
  collect_event('step', id, 'g', row[1], 'n', record and record.n, 's', record and record.s)
end
-- Up to \`limit\` waits for events whose timeout has passed by \`now\` end (docs/design/steps.md):
-- each one's step records \`timedout\` (its handler's waitForEvent resolves null) and its job goes
-- back to be claimed. Read only in a queue where a step was ever written (meta \`st\`). Returns
-- how many timed out; the jobs join \`batch\` for the caller to admit.
local function time_out_waits(now, limit, batch)
  local due = redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', now, 'LIMIT', 0, limit)
  for _, id in ipairs(due) do
    local r = redis.call('HMGET', job_key(id), 'sw', 'wk', 'g', 'o')
    if r[1] then
      resume_step(id, r[1], r[2], { r[3], r[4] }, { s = 'timedout', ft = now }, batch)
    else
      redis.call('ZREM', PREFIX .. 'awaiting', id)
    end
  end
  return #due
end
-- Up to \`limit\` scheduled jobs due by \`now\` move to their lane (or pending), earliest first.
-- Returns how many moved, the next due time still scheduled (-1 when none), and whether work
-- became claimable. A row keeps its \`t\`: a retry sent again after its job was promoted still
-- answers scheduled, as it did (includes/settled_token.lua). Collects a \`promoted\` event (j, g) per
-- job, earliest first: the caller flushes. In a queue with durable steps (meta \`st\`), a sleeper's
-- step records \`done\` as it moves (docs/design/steps.md), it leaves the sleepers' index, and the
-- waits for events whose timeout passed end too (includes/time_out_waits.lua), up to \`limit\` more.
local function promote_due(now, limit)
  local due = redis.call('ZRANGEBYSCORE', K_SCHEDULED, '-inf', now, 'LIMIT', 0, limit)
  local woke = false
  local steps = queue_meta().st
  local batch = { order = {} }
  if #due > 0 then
    chunked('ZREM', K_SCHEDULED, due)
    if steps then chunked('ZREM', PREFIX .. 'sleeping', due) end
    for _, id in ipairs(due) do
      local key = job_key(id)
      local r
      if steps then
        r = redis.call('HMGET', key, 'g', 'o', 'sw')
        if r[3] and string.sub(r[3], 1, 1) == 's' then
          local record = step_update(id, string.sub(r[3], 2), { s = 'done', ft = now })
          redis.call('HDEL', key, 'sw')
          collect_event('step', id, 'g', r[1], 'n', record and record.n, 's', 'done')
        end
      else
        r = redis.call('HMGET', key, 'g', 'o')
      end
      redis.call('HSET', key, 's', 'pending')
      batch_push(batch, r[1], r[2], id)
      collect_event('promoted', id, 'g', r[1])
    end
  end
  local timed_out = steps and time_out_waits(now, limit, batch) or 0
  if #due > 0 or timed_out > 0 then woke = admit(batch) end
  return #due + timed_out, first_score(K_SCHEDULED), woke
end
-- The stored rate limit of \`entry\` ("limit:periodMs"): QUEUE_ENTRY's in meta \`rate\`, a group's in
-- K_GRATE; false when it has none (ungrouped work has none of its own).
local function rate_spec(entry)
  if entry == QUEUE_ENTRY then return redis.call('HGET', K_META, 'rate') end
  if entry == UNGROUPED then return false end
  return redis.call('HGET', K_GRATE, entry)
end
-- A stored rate limit, "limit:periodMs", as two numbers; nil for none (nil or false) or anything else.
local function parse_rate(spec)
  local limit, period = string.match(spec or '', '^(%d+):(%d+)$')
  if not limit then return nil end
  return tonumber(limit), tonumber(period)
end
-- The rate limit of \`entry\` (QUEUE_ENTRY for the queue's own): limit and period in ms, or nil
-- when it has none.
local function rate_of(entry)
  return parse_rate(rate_spec(entry))
end
-- The log of \`entry\`'s recent job starts (a zset: member a lease token, score the start's server
-- ms): emq:{q}:starts for the queue's own rate limit, emq:{q}:starts:<g> for group g's.
local function starts_key(entry)
  if entry == QUEUE_ENTRY then return PREFIX .. 'starts' end
  return PREFIX .. 'starts:' .. entry
end
-- How many jobs \`entry\` started within the window of \`period\` ms that ends now: its starts log
-- trimmed to the starts after now - period (a start at s counts until s + period), then counted.
local function rate_used(entry, period, now)
  local key = starts_key(entry)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - period))
  return redis.call('ZCARD', key)
end
-- When \`entry\` may start one more job under its rate limit (\`limit\` starts per \`period\` ms): now
-- when fewer than \`limit\` starts are in the window, else the time enough of them leave it that
-- one more fits (the (used - limit + 1)th oldest start plus the period).
local function rate_due(entry, limit, period, now)
  local used = rate_used(entry, period, now)
  if used < limit then return now end
  local at = redis.call('ZRANGE', starts_key(entry), used - limit, used - limit, 'WITHSCORES')[2]
  return tonumber(at) + period
end
-- When ring entry \`entry\` (or QUEUE_ENTRY) may start a job again, as far as its hold and its rate
-- limit say (its pause, concurrency limit and lane aside): a time <= now means it may now.
local function closed_until(entry, now)
  local at = tonumber(redis.call('HGET', K_HOLDS, entry)) or 0
  local limit, period = rate_of(entry)
  if limit then
    local due = rate_due(entry, limit, period, now)
    if due > at then at = due end
  end
  return at
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- A throttled entry whose hold and rate limit let it start again: out of K_THROTTLED (its hold,
-- over, forgotten), and a ring entry back on the ring when its lane is serviceable. Returns true
-- when work became claimable (for QUEUE_ENTRY: the ring has entries); the caller rings the doorbell.
local function reopen(entry)
  redis.call('ZREM', K_THROTTLED, entry)
  redis.call('HDEL', K_HOLDS, entry)
  if entry == QUEUE_ENTRY then return redis.call('LLEN', K_RING) > 0 end
  if lane_serviceable(entry) then
    redis.call('RPUSH', K_RING, entry)
    return true
  end
  return false
end
-- Throttled entries due by \`now\` (at most \`limit\`, earliest first) start again when their hold and
-- rate limit let them (reopen), or wait on at the time they now may (a hold lengthened, a limit
-- lowered meanwhile). Returns true when work became claimable; the caller rings the doorbell.
-- Nothing is read on a queue that never throttled an entry (meta \`th\`).
local function readmit_due(now, limit)
  if not queue_meta().th then return false end
  local due = redis.call('ZRANGEBYSCORE', K_THROTTLED, '-inf', string.format('%d', now), 'LIMIT', 0, limit)
  local woke = false
  for _, entry in ipairs(due) do
    local at = closed_until(entry, now)
    if at > now then
      redis.call('ZADD', K_THROTTLED, string.format('%d', at), entry)
    elseif reopen(entry) then
      woke = true
    end
  end
  return woke
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

local limit = arg_int(ARGV[2], 'limit', 1)
local now = now_ms()
local moved, next_due, woke = promote_due(now, limit)
-- throttled entries whose time has come go back (includes/readmit_due.lua)
if readmit_due(now, limit) then woke = true end
if woke then ring_doorbell() end
flush_events()
return { moved, next_due }
`,
  },
  rateLimits: {
    name: "rateLimits",
    sha1: "75a4085dc380d2dd3b8c32504e1bcf18c3ac8f40",
    lua: `--[[
  rate-limits: the queue's rate limits, holds and throttled entries, for a reader (stats, the HTTP
  API, the dashboard).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the most throttled entries to answer (>= 0), earliest first
  Derives  emq:{q}:grate, emq:{q}:holds
  Reply    {now, queue rate "limit:periodMs" or "", {group, "limit:periodMs", ...},
           {entry, until, held until or "", ...}} where an entry is a group, "*" (ungrouped work)
           or "!" (the queue) and \`until\` when it may start again as the throttle has it
  Errors   EMQARG
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local limit = arg_int(ARGV[2], 'limit', 0)
local throttled = {}
if limit > 0 then
  local pairs_ = redis.call('ZRANGE', K_THROTTLED, 0, limit - 1, 'WITHSCORES')
  for i = 1, #pairs_, 2 do
    throttled[#throttled + 1] = pairs_[i]
    throttled[#throttled + 1] = pairs_[i + 1]
    throttled[#throttled + 1] = redis.call('HGET', K_HOLDS, pairs_[i]) or ''
  end
end
return { now_ms(), redis.call('HGET', K_META, 'rate') or '', redis.call('HGETALL', K_GRATE), throttled }
`,
  },
  readEvents: {
    name: "readEvents",
    sha1: "2447468ea18e7fcf415a808f016b5e2cf87924f2",
    lua: `--[[
  read-events: a page of the queue's events stream, oldest first, after an entry id. An entry is
  the events of one script call, each starting with its field \`e\` (docs/design.md, "Events"), and
  a page never splits one: it takes whole entries while their events fit in \`limit\`, and at least
  one (an entry holds at most 500 events), so a reader resumes after the last entry id it read.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  after: an entry id \`<ms>-<seq>\` (exclusive), or "0" for the start of the stream
  ARGV[3]  limit (1 to 1000): the most events, but at least one entry
  Reply    { {id, {field, value, ...}}, ... } the entries as XRANGE gives them, oldest first
  Errors   EMQARG (a malformed after or limit), before anything is read
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end

local after = ARGV[2]
if after ~= '0' and not string.match(after, '^%d+%-%d+$') then
  error(redis.error_reply('EMQARG after must be an event id <ms>-<seq> or 0, got ' .. tostring(after)))
end
local limit = arg_int(ARGV[3], 'limit', 1)
if limit > 1000 then error(redis.error_reply('EMQARG limit must be at most 1000, got ' .. ARGV[3])) end

local page, events = {}, 0
local start = after == '0' and '-' or '(' .. after
while events < limit do
  -- a few entries a read: an entry may hold hundreds of events, and the page stops inside a read
  local want = math.min(limit - events, 100)
  local entries = redis.pcall('XRANGE', K_EVENTS, start, '+', 'COUNT', want)
  -- the greatest id there is: nothing can follow it
  if entries.err and string.find(entries.err, 'invalid start ID for the interval', 1, true) then return page end
  if entries.err then
    error(redis.error_reply('EMQARG after must be an event id <ms>-<seq> or 0, got ' .. after .. ' (' .. entries.err .. ')'))
  end
  for _, entry in ipairs(entries) do
    local fields, count = entry[2], 0
    for i = 1, #fields, 2 do
      if fields[i] == 'e' then count = count + 1 end
    end
    if #page > 0 and events + count > limit then return page end
    page[#page + 1] = entry
    events = events + count
    start = '(' .. entry[1]
  end
  if #entries < want then break end
end
return page
`,
  },
  reap: {
    name: "reap",
    sha1: "83f8659ec3949a49f9664927cb020f6f1ab0b598",
    lua: `--[[
  reap: jobs whose lease ended go back to their lane (or pending) in their original order, or to
  dead once their attempts are used up; their group slots are freed. At most \`limit\` per call.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  limit (>= 1)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:minutes
           (each burial counted in its minute: includes/bury.lua)
  Reply    {requeued, buried}
  Events   \`stalled\` (j, g, a) per job, each followed by \`dead\` (j, g, a, x) when it is buried, in
           one entry
  Counts   meta \`stalled\` += the jobs reaped, one HINCRBY a call (/metrics)
  Dedupe   a job buried releases its until-finished dedupe key, which leaves its row (bury)
  Errors   EMQARG
  Rings    the doorbell when work became claimable
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- Count \`g\` once in \`tally\`, {order = {groups in first-seen order}, [g] = count}: settling a
-- batch frees each group's slots in one step (free_slots) instead of one per job.
local function tally(t, g)
  if not g or g == '' then return end
  if not t[g] then
    t[g] = 0
    t.order[#t.order + 1] = g
  end
  t[g] = t[g] + 1
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- The queue's retention of dead jobs (meta \`dage\`: the most ms a dead job is kept, \`dmax\`: the
-- most dead jobs kept; set-dead-retention writes them), applied after a burial at \`now\`: at most
-- two of the oldest dead jobs past it are deleted, row and all. Two, not all: a burial does a
-- bounded amount of work, and a backlog (a retention just set or lowered) still shrinks by one
-- a burial; clean('dead') removes it at once. A queue without a retention pays one HMGET. A row
-- deleted releases its ttl dedupe key, as any removal does (an until-finished one went at death),
-- and a flow parent's unfinished children are removed (forget_flow), as removing it would.
local function trim_dead(now)
  local r = redis.call('HMGET', K_META, 'dage', 'dmax', 'fl')
  if not r[1] and not r[2] then return end
  local victims, seen = {}, {}
  local function add(ids)
    for _, id in ipairs(ids) do
      if not seen[id] and #victims < 2 then
        seen[id] = true
        victims[#victims + 1] = id
      end
    end
  end
  if r[1] then
    add(redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', string.format('%d', now - tonumber(r[1])), 'LIMIT', 0, 2))
  end
  if r[2] and #victims < 2 then
    local excess = redis.call('ZCARD', K_DEAD) - tonumber(r[2])
    if excess > 0 then add(redis.call('ZRANGE', K_DEAD, 0, math.min(excess, 2) - 1)) end
  end
  if #victims == 0 then return end
  for _, id in ipairs(victims) do
    if r[3] then
      local row = redis.call('HMGET', job_key(id), 'dk', 'fw')
      release_dedupe(id, row[1])
      if row[2] then forget_flow(id, 'dead', nil, row[2], nil, now) end
    else
      release_dedupe(id, redis.call('HGET', job_key(id), 'dk'))
    end
    redis.call('DEL', job_key(id))
  end
  redis.call('ZREM', K_DEAD, unpack(victims))
end
-- A job that held deduplication key \`k\` (its row's \`dk\`; nil or false: none) in until-finished
-- mode (no \`dt\`, the row's ttl) has finished: completed or dead. The key is released, so the next
-- enqueue with it adds a job; \`forget\` (a dead job's row stays) also takes \`dk\` off the row, so a
-- reprocessed job does not claim a key it no longer holds. A ttl key is left to expire.
local function release_settled(id, k, ttl, forget)
  if not k or ttl then return end
  release_dedupe(id, k)
  if forget then redis.call('HDEL', job_key(id), 'dk') end
end
-- Count \`n\` (>= 1) jobs of kind \`kind\` ('c' completed, 'd' sent to dead) in the minute of \`now\`
-- (the script's server ms) in K_MINUTES, field \`<kind><minute>\`, minute = floor(now / 60000):
-- the per-minute buckets of the last hour counts.lua reads (docs/design.md, "Keyspace"). One
-- HINCRBY a call; only the first write of its kind in a minute (HINCRBY answers n: the field was
-- new) also drops the fields more than 60 minutes older than this one (HKEYS over at most 122
-- fields, one HDEL) and sets the key to expire 61 minutes after this minute starts, a minute after
-- its newest field has left every reader's hour: so a queue gone idle leaves no key behind. At
-- most three commands more per kind and minute: amortised, one command a call.
local function count_minute(kind, n, now)
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', K_MINUTES, kind .. string.format('%d', minute), n) ~= n then return end
  local oldest, old = minute - 60, {}
  for _, field in ipairs(redis.call('HKEYS', K_MINUTES)) do
    local m = tonumber(string.sub(field, 2))
    if not m or m < oldest then old[#old + 1] = field end
  end
  if #old > 0 then redis.call('HDEL', K_MINUTES, unpack(old)) end
  redis.call('PEXPIREAT', K_MINUTES, string.format('%d', (minute + 61) * 60000))
end
-- Move job \`id\`, already out of every other set, to dead with its last error; count it in
-- meta.buried (dead jobs ever, for metrics: the dead set shrinks on reprocess and remove) and in
-- its minute's bucket (count_minute: every way to dead comes through here, the reaper's too), then
-- apply the queue's retention of dead jobs (trim_dead), which may delete this very row when the
-- retention keeps none.
-- \`mark\`: the \`t\` the settle that buries it leaves (settled_token), nil for the reaper, which
-- leaves the claim's bare token so the holder it took the lease from stays fenced off.
-- \`dk\`, \`dt\`: the row's dedupe key and its ttl (false or nil: none): an until-finished key is
-- released and leaves the row (release_settled), so a reprocess does not take it again.
-- \`fp\`, \`token\`: a flow child's parent (its row's \`fp\`; nil for none) and the lease token of the
-- run that died (nil: none), for the news its parent gets through the outbox (report_up).
local function bury(id, err, now, mark, dk, dt, fp, token)
  release_settled(id, dk, dt, true)
  if fp then report_up(id, fp, token, 'd', err, now) end
  redis.call('ZADD', K_DEAD, now, id)
  redis.call('HINCRBY', K_META, 'buried', 1)
  count_minute('d', 1, now)
  if mark then
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now, 't', mark)
  else
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now)
  end
  trim_dead(now)
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- The entries of \`entries\` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- The tail every settle shares: free the group slots counted in \`freed\` (tally), then admit the
-- jobs collected in \`batch\` (batch_push; nil when nothing goes back to a lane). Slots first: a
-- lane that gets its job back and a freed slot goes on the ring once. Returns true when either
-- made work claimable; the caller rings the doorbell, once (beat rings once for its reaping and
-- its promotion together, so this does not ring itself).
local function free_and_admit(freed, batch)
  local woke = free_slots(freed)
  if batch and admit(batch) then woke = true end
  return woke
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- Up to \`limit\` jobs whose lease ended by \`now\` leave the active set: back to their lane (or
-- pending) with their original order, or dead once their attempts are used up; their group
-- slots are freed. Returns requeued, buried, and whether work became claimable. The row keeps the
-- claim's bare token in \`t\` (no settle's mark, includes/settled_token.lua), so a late settle by
-- the holder it took the lease from is fenced off, never taken for a repeat of a settle that ran.
-- Collects a \`stalled\` event (j, g, a) per job, followed by its \`dead\` (x 'lease expired') when that
-- was its last attempt: the caller flushes. Adds the jobs reaped to meta \`stalled\` (the counter
-- /metrics shows), once a call. A job buried releases its until-finished dedupe key (bury).
local function reap_expired(now, limit)
  local ids = redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', now, 'LIMIT', 0, limit)
  if #ids == 0 then return 0, 0, false end
  chunked('ZREM', K_ACTIVE, ids)
  local requeued, buried, freed = 0, 0, { order = {} }
  local batch = { order = {} }
  for _, id in ipairs(ids) do
    local r = redis.call('HMGET', job_key(id), 'a', 'g', 'm', 'z', 'o', 'dk', 'dt', 'fp', 't')
    if r[1] then
      tally(freed, r[2])
      local attempt = tonumber(r[1]) - (tonumber(r[4]) or 0)
      collect_event('stalled', id, 'g', r[2], 'a', attempt)
      if attempt >= (tonumber(r[3]) or DEFAULT_MAX_ATTEMPTS) then
        bury(id, 'lease expired', now, nil, r[6], r[7], r[8], r[9])
        collect_event('dead', id, 'g', r[2], 'a', attempt, 'x', 'lease expired')
        buried = buried + 1
      else
        redis.call('HSET', job_key(id), 's', 'pending')
        batch_push(batch, r[2], r[5], id)
        requeued = requeued + 1
      end
    end
  end
  if requeued + buried > 0 then redis.call('HINCRBY', K_META, 'stalled', requeued + buried) end
  return requeued, buried, free_and_admit(freed, batch)
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

local limit = arg_int(ARGV[2], 'limit', 1)
local requeued, buried, woke = reap_expired(now_ms(), limit)
if woke then ring_doorbell() end
flush_events()
return { requeued, buried }
`,
  },
  registerQueue: {
    name: "registerQueue",
    sha1: "375ce8686a248849f8a202b31599fe74131a1b00",
    lua: `--[[
  register-queue: record a queue's name in the registry of queues, so metrics and dashboards can
  list queues without scanning the keyspace; a partitioned queue also records its count of
  partitions, so the HTTP API and the CLI address it by its name. A Queue runs it once per process,
  with its first enqueue (a partition's Queue registers the queue it is a part of). The registry is
  the one place outside any queue's {q} slot: its two keys share a slot.

  KEYS[1]  emq:queues (set of names)
  KEYS[2]  {emq:queues}:partitions (hash: name -> count of partitions)
  ARGV[1]  the queue's name
  ARGV[2]  its count of partitions, 0 for an unpartitioned queue
  Reply    1 newly registered, 0 already known
  Errors   EMQPARTITION: the name is registered partitioned and this queue is not, or with another
           count, or registered unpartitioned and this queue is partitioned (nothing written)
]]
local name, count = ARGV[1], tonumber(ARGV[2])
local known = redis.call('HGET', KEYS[2], name)
if count == 0 then
  if known then
    return redis.error_reply('EMQPARTITION queue ' .. name .. ' is partitioned (' .. known .. ' partitions): open it with partitions: ' .. known)
  end
  return redis.call('SADD', KEYS[1], name)
end
if known then
  if tonumber(known) ~= count then
    return redis.error_reply('EMQPARTITION queue ' .. name .. ' has ' .. known .. ' partitions, not ' .. count .. ': a group would change partition, so the count is fixed')
  end
  return 0
end
if redis.call('SISMEMBER', KEYS[1], name) == 1 then
  return redis.error_reply('EMQPARTITION queue ' .. name .. ' exists unpartitioned: obliterate it or choose another name to partition it')
end
redis.call('HSET', KEYS[2], name, count)
return redis.call('SADD', KEYS[1], name)
`,
  },
  release: {
    name: "release",
    sha1: "f09252ea67cbdbb16588e65725f47f2eade98454",
    lua: `--[[
  release: give back leased jobs that were never started (an edge beat ran out of time before
  their turn), fenced on (id, token): back to their lane (or pending) in their original order,
  their claim not counted as an attempt, their group slots freed. A job given back with a hold
  (its handler threw RateLimitedError: the API it calls said 429) also holds its group, or the
  ungrouped lane, for that many ms (includes/hold_entry.lua), before its lane is looked at again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] triples: id, token, hold ms (0: none)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:holds
  Reply    {code, ...}: 1 released, 0 fenced off (nothing changed). A repeat (the same id and
           token again: a reply lost and the request sent again) answers 1 and writes nothing,
           so the claim is un-counted once, until the job is claimed again or removed
  Events   \`released\` (j, g) per job given back, in ARGV order, then \`held\` (g, u) per hold, in
           one entry; a fenced-off job or a repeat appends nothing (and holds nothing)
  Repeats  the release leaves \`<token>/g1\` in \`t\` (includes/settled_token.lua) as it writes \`a\`
           back down. Only the holder of the token can write that mark (the fence) and a token
           is handed out once in the queue (invariant 4), so the mark means this very release
           ran: the pending row under a bare token that a reaped lease leaves (\`a\` kept) is not
           taken for it. move-group keeps \`t\`; a claim rewrites it (the next holder's token) and
           remove deletes the row: then fenced
  Errors   EMQKIND, EMQARG (a hold that is not an integer >= 0), raised before anything is written
  Rings    the doorbell when released work is claimable
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- The fence: the row of job \`id\` if it is active under lease token \`token\` (its \`t\`), else nil
-- and the row's state and \`t\` (false when absent), for each_held's repeat check.
-- Returns {attempts, group or false, max attempts, attempts base, backoff, order score, dedupe key
-- \`dk\` or false, its ttl \`dt\` or false, a flow child's parent \`fp\` or false}, the defaults filled in for an absent \`m\` or \`b\`; an
-- active row always has its order (claim wrote it).
local function hold(id, token)
  local r = redis.call('HMGET', job_key(id), 's', 't', 'a', 'g', 'm', 'z', 'b', 'o', 'dk', 'dt', 'fp')
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  return { tonumber(r[3]), r[4], tonumber(r[5]) or DEFAULT_MAX_ATTEMPTS, tonumber(r[6] or '0'), r[7] or DEFAULT_BACKOFF, r[8], r[9], r[10], r[11] }
end
-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index \`first\`, \`stride\` values
-- each. \`fence(id, token)\` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token (then the row's state
-- and \`t\` after it); \`act(id, held, i)\` settles a held job (\`held\` what fence returned, \`i\` the index
-- of its id, its other values after it) and returns its code. A job not held is left as it was:
-- its code is \`again(token, state, t)\` (nil for a settle without one: 0), the code a repeat of
-- this settle answers when the row shows it already ran under that token (its reply was lost and
-- the request sent again), else 0, fenced off. Returns the codes in ARGV order. The caller runs
-- the ids through check_kind before: the kind door's errors come before any write, and act writes.
local function each_held(first, stride, fence, act, again)
  local codes = {}
  for i = first, #ARGV, stride do
    local id, token = ARGV[i], ARGV[i + 1]
    local held, state, t = fence(id, token)
    if held then
      codes[#codes + 1] = act(id, held, i)
    elseif again then
      codes[#codes + 1] = again(token, state, t)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end
-- The \`t\` a settle leaves in the row it moves out of active: the holder's lease token, '/', then
-- what the settle did, \`what\`: the script's letter and its reply code ('r1' retried for later,
-- 'r2' retried now, 'r3' buried by retry, 'f1' failed, 'g1' given back). A claim writes a bare
-- token and no other script writes a mark, so the mark says that this very settle ran: a repeat
-- of it (its reply lost, the request sent again) answers as it did and writes nothing
-- (includes/repeat_code.lua), where a holder whose lease the reaper took finds its token bare.
local function settled_token(token, what)
  return token .. '/' .. what
end
-- What a settle answers for a job it does not hold, from the row's \`t\`: when \`t\` is the mark this
-- settle leaves (settled_token(token, kind .. code), \`code\` one of \`codes\`), the settle already
-- ran under this token (a repeat of it: its reply was lost and the request sent again), so the code
-- it answered then; else 0, fenced off.
local function repeat_code(token, t, kind, codes)
  for _, code in ipairs(codes) do
    if t == settled_token(token, kind .. code) then return code end
  end
  return 0
end
-- Count \`g\` once in \`tally\`, {order = {groups in first-seen order}, [g] = count}: settling a
-- batch frees each group's slots in one step (free_slots) instead of one per job.
local function tally(t, g)
  if not g or g == '' then return end
  if not t[g] then
    t[g] = 0
    t.order[#t.order + 1] = g
  end
  t[g] = t[g] + 1
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- The entries of \`entries\` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- The tail every settle shares: free the group slots counted in \`freed\` (tally), then admit the
-- jobs collected in \`batch\` (batch_push; nil when nothing goes back to a lane). Slots first: a
-- lane that gets its job back and a freed slot goes on the ring once. Returns true when either
-- made work claimable; the caller rings the doorbell, once (beat rings once for its reaping and
-- its promotion together, so this does not ring itself).
local function free_and_admit(freed, batch)
  local woke = free_slots(freed)
  if batch and admit(batch) then woke = true end
  return woke
end
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- The earliest next slot of any scheduler (ms), or -1 when none will fire: a scheduler that fires
-- no more waits in \`schedulers\` with the score +inf, which Redis answers as "inf". A queue that
-- never made a scheduler (meta \`sc\` unset) has none: nothing is read.
local function first_slot()
  if not queue_meta().sc then return -1 end
  local score = redis.call('ZRANGE', K_SCHEDULERS, 0, 0, 'WITHSCORES')[2]
  if score == nil or score == 'inf' then return -1 end
  return tonumber(score)
end
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then. The throttled entries are read only once
-- any was (meta \`th\`), the waits' timeouts once a step was (meta \`st\`).
-- The earliest timeout of a wait for an event (a wait without one scores +inf): -1 for none.
local function first_timeout()
  local at = tonumber(redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  return at or -1
end
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), queue_meta().th and first_score(K_THROTTLED) or -1,
    queue_meta().st and first_timeout() or -1 }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- The schedule bell for a time \`at\` (ms) that was just written (a scheduler's next slot): when it
-- is now the next due time of the queue, push a token onto \`sched\` so a parked consumer re-reads
-- the next due time and sets its timer (a slot already due runs a beat at once).
local function ring_sched_bell_at(at)
  if at >= 0 and next_due() == at then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
-- Throttle \`entry\` (a ring entry, or QUEUE_ENTRY) until \`at\` (ms): into K_THROTTLED at that score,
-- or at its later one if it is there already (a throttled entry is off the ring; the caller takes
-- it off). \`at\` is a due time the scripts know (includes/next_due.lua): when it is the queue's
-- next one the schedule bell rings, so parked consumers set their timers for it. The queue's
-- first throttle sets meta \`th\`, under which the scripts read \`throttled\` at all.
local function throttle(entry, at)
  mark_feature('th')
  redis.call('ZADD', K_THROTTLED, 'GT', string.format('%d', at), entry)
  ring_sched_bell_at(at)
end
-- Hold ring entry \`entry\` (a group, or UNGROUPED) until \`until_ms\` (server ms), or until the end of
-- a longer hold it has: its hold in K_HOLDS, the entry throttled until then and off the ring.
-- Returns the time it is held until.
local function hold_entry(entry, until_ms)
  local held = tonumber(redis.call('HGET', K_HOLDS, entry)) or 0
  if until_ms > held then
    held = until_ms
    redis.call('HSET', K_HOLDS, entry, string.format('%d', held))
  end
  throttle(entry, held)
  redis.call('LREM', K_RING, 0, entry)
  return held
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

for i = 2, #ARGV, 3 do
  check_kind(ARGV[i])
  arg_int(ARGV[i + 2], 'hold', 0)
end
local freed, batch, outcomes, holds = { order = {} }, { order = {} }, { 1 }, {}
local codes = each_held(2, 3, hold, function(id, row, i)
  local attempts, group, order = row[1], row[2], row[6]
  redis.call('ZREM', K_ACTIVE, id)
  tally(freed, group)
  redis.call('HSET', job_key(id), 's', 'pending', 'a', attempts - 1, 't', settled_token(ARGV[i + 1], 'g1'))
  batch_push(batch, group, order, id)
  collect_event('released', id, 'g', group)
  local ms = tonumber(ARGV[i + 2])
  if ms > 0 then
    local entry = group or UNGROUPED
    holds[entry] = math.max(holds[entry] or 0, ms)
  end
  return 1
end, function(token, _, t)
  return repeat_code(token, t, 'g', outcomes)
end)
-- the holds first, so the lanes the jobs go back to stay off the ring
if next(holds) then
  local now = now_ms()
  for entry, ms in pairs(holds) do
    local held = hold_entry(entry, now + ms)
    collect_event('held', nil, 'g', entry ~= UNGROUPED and entry or nil, 'u', string.format('%d', held))
  end
end
if free_and_admit(freed, batch) then ring_doorbell() end
flush_events()
return codes
`,
  },
  removeScheduler: {
    name: "removeScheduler",
    sha1: "469032d60f0d5df127f2bfd31ed2d9ec3fe082fe",
    lua: `--[[
  remove-scheduler: scheduler \`id\` fires no more, and its row is deleted. Jobs it fired stay as
  they are (they are jobs like any other).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  scheduler id
  Derives  emq:{q}:scheduler:<id>
  Reply    1 removed, 0 no such scheduler
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The row of scheduler \`id\`: emq:{q}:scheduler:<id> (a hash, docs/design.md "Schedulers").
local function scheduler_key(id)
  return PREFIX .. 'scheduler:' .. id
end

local removed = redis.call('ZREM', K_SCHEDULERS, ARGV[2])
redis.call('DEL', scheduler_key(ARGV[2]))
return removed
`,
  },
  remove: {
    name: "remove",
    sha1: "f8296b5b56b9d934b6f4c9b2eecb98479a01d864",
    lua: `--[[
  remove: delete a job in any state. An active job's group slot is freed and its holder is fenced
  off from then on; a lane left empty leaves the ring.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  ARGV[3]  "" (a caller's removal), or "<queue>|<parent id>": the removal of a removed flow
           parent's child, done only while the row's \`fp\` names that parent (an id enqueued again
           since is another job), and told to no parent
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:kids:<id>
  Flows    an unfinished flow child tells its parent it is gone (the parent stops waiting for
           it); a flow parent has its unfinished children removed in turn and its children hash
           deleted (includes/forget_flow.lua), through the outbox
  Reply    {1 removed or 0 no such job, {outbox entries written, for the caller to relay}}
  Events   \`removed\` (j, g) when it removed one
  Dedupe   the job's dedupe key (\`dk\`, either mode) is released while it still names the job
  Errors   EMQKIND
  Rings    the doorbell when the freed slot made work claimable
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- The entries of \`entries\` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
-- \`count\` jobs of group g left the active set: free_slots for one group. Returns true when the
-- group went back on the ring (work became claimable).
local function free_slot(g, count)
  if not g or g == '' then return false end
  local t = { order = { g } }
  t[g] = count
  return free_slots(t)
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- Ring entry g may have stopped being serviceable (its lane emptied, it was paused, its limit
-- was lowered): take it off the ring if so.
local function leave_ring(g)
  if not lane_serviceable(g) then redis.call('LREM', K_RING, 0, g) end
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- A row with durable steps (its \`sn\`) about to be deleted takes its steps with it
-- (docs/design/steps.md): its steps hash, its place among the sleepers and the jobs awaiting an
-- event, and among its wait's waiters (\`wk\`, the row's, nil when it waits for none).
local function forget_steps(id, wk)
  redis.call('DEL', step_key(id))
  redis.call('ZREM', PREFIX .. 'sleeping', id)
  redis.call('ZREM', PREFIX .. 'awaiting', id)
  if wk then redis.call('ZREM', wk, id) end
end

local id = ARGV[2]
check_kind(id)
local key = job_key(id)
local r = redis.call('HMGET', key, 's', 'g', 'dk', 'fp', 'fw', 't', 'sn', 'wk')
local state, group = r[1], r[2]
if not state then return { 0, {} } end
local fp = r[4]
if ARGV[3] and ARGV[3] ~= '' then
  -- a removed parent's child: this row only while it is still that parent's
  if not fp or string.sub(fp, 1, #ARGV[3] + 1) ~= ARGV[3] .. '|' then return { 0, {} } end
  fp = nil
end
release_dedupe(id, r[3])
if fp or r[5] then forget_flow(id, state, fp, r[5], r[6], now_ms()) end
if state == 'pending' then
  local entry = group or UNGROUPED
  -- a job in an arrivals list is found by LREM, linear in the list's length
  if redis.call('ZREM', lane_key(entry), id) == 0 then redis.call('LREM', fifo_key(entry), 1, id) end
  leave_ring(entry)
elseif state == 'active' then
  redis.call('ZREM', K_ACTIVE, id)
  if free_slot(group, 1) then ring_doorbell() end
elseif state == 'scheduled' then
  redis.call('ZREM', K_SCHEDULED, id)
elseif state == 'dead' then
  redis.call('ZREM', K_DEAD, id)
elseif state == 'completed' then
  redis.call('ZREM', K_COMPLETED, id)
elseif state == 'waiting' then
  redis.call('ZREM', K_WAITING, id)
end
if r[7] then forget_steps(id, r[8]) end
redis.call('DEL', key)
emit('removed', id, 'g', group)
return { 1, outbox_written }
`,
  },
  reprocessDead: {
    name: "reprocessDead",
    sha1: "d30be7b229e998b7a4c94ea1376d9a9e28647dbe",
    lua: `--[[
  reprocess-dead: up to n dead jobs, oldest first, are claimable again with a fresh allowance of
  attempts, each as reprocess leaves it (its attempts count and \`t\` kept, \`z\` set to its attempts,
  back in its lane at its own order): one chunk of Queue.reprocessDead, which calls again while
  dead jobs remain and its limit allows.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  n (>= 1): the most jobs this call takes
  ARGV[3]  request key ("" = none): the same key again answers this call's reply and takes no
           more (a reply lost and the call sent again)
  ARGV[4]  how long the request key is remembered, ms (>= 1 with a key)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>
  Flows    a flow child tells its parent it runs again (includes/report_up.lua: a parent it
           failed waits again); a flow parent runs with its children as they stand (its \`fx\`,
           the child that failed it, is forgotten)
  Reply    {reprocessed, more 0|1 (dead jobs remain), {outbox entries written, for the caller to relay}}
  Events   \`reprocessed\` (j, g) per job, oldest first, in one entry; a repeat answered from the
           request key appends nothing
  Errors   EMQARG (a malformed number), before anything is written
  Rings    the doorbell once when any of them is claimable now
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- What a bulk admin call answered when it ran before under request key \`key\` (not ""): its reply
-- was lost and the same call sent again, so it answers the same and writes nothing. nil when the
-- key is "" or unseen. The record is emq:{q}:req:<key>, written by record_reply.
local function recorded_reply(key)
  if key == '' then return nil end
  local seen = redis.call('GET', PREFIX .. 'req:' .. key)
  if seen then return cjson.decode(seen) end
  return nil
end
-- Remember \`reply\` under request key \`key\` for \`ttl\` ms (nothing for key ""), so the same call sent
-- again answers it (recorded_reply); returns \`reply\`. A reply is numbers and strings in nested
-- lists, which cjson carries both ways (an empty list comes back as an empty list).
local function record_reply(key, ttl, reply)
  if key ~= '' then redis.call('SET', PREFIX .. 'req:' .. key, cjson.encode(reply), 'PX', ttl) end
  return reply
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local n = arg_int(ARGV[2], 'n', 1)
local request = ARGV[3]
local ttl = 0
if request ~= '' then ttl = arg_int(ARGV[4], 'requestTtlMs', 1) end
local seen = recorded_reply(request)
if seen then return seen end

local ids = redis.call('ZRANGE', K_DEAD, 0, n - 1)
local now = #ids > 0 and now_ms() or 0
local batch = { order = {} }
for _, id in ipairs(ids) do
  local key = job_key(id)
  local r = redis.call('HMGET', key, 'g', 'o', 'a', 'fp', 't', 'fw')
  redis.call('HSET', key, 's', 'pending', 'z', r[3])
  if r[6] then redis.call('HDEL', key, 'f', 'fx') else redis.call('HDEL', key, 'f') end
  if r[4] then report_up(id, r[4], r[5], 'p', '', now) end
  batch_push(batch, r[1], r[2], id)
  collect_event('reprocessed', id, 'g', r[1])
end
chunked('ZREM', K_DEAD, ids)
if admit(batch) then ring_doorbell() end
flush_events()
return record_reply(request, ttl, { #ids, redis.call('EXISTS', K_DEAD), outbox_written })
`,
  },
  reprocess: {
    name: "reprocess",
    sha1: "71f10d92b312f2ee87f7a7bcd7d80a83ace58e28",
    lua: `--[[
  reprocess: a dead job is claimable again with a fresh allowance of attempts. Its attempts count
  keeps rising (it is the fence token); the allowance restarts from here. It keeps \`t\`: a retry or
  fail that buried the job and is sent again still finds its mark there, answers dead as it did
  and writes nothing (it must not bury the job again); the next claim rewrites \`t\`.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Flows    a flow child tells its parent it runs again (includes/report_up.lua: a parent it
           failed waits again); a flow parent runs with its children as they stand (its \`fx\`,
           the child that failed it, is forgotten)
  Reply    {1 reprocessed, 0 no such job, -1 the job is not dead; {outbox entries written, for
           the caller to relay}}
  Events   \`reprocessed\` (j, g) when it reprocessed one
  Dedupe   the job does not take its dedupe key again: an until-finished one was released at death
  Errors   EMQKIND
  Rings    the doorbell when it is claimable now
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- admit for one job going back in its place (reprocess, a move between groups): into ring entry
-- g's zset at its order \`score\`. Returns true when it is claimable now.
local function admit_one(g, score, id)
  local batch = { order = {} }
  batch_push(batch, g, score, id)
  return admit(batch)
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local id = ARGV[2]
check_kind(id)
local key = job_key(id)
local r = redis.call('HMGET', key, 's', 'g', 'o', 'a', 'fp', 't', 'fw')
if not r[1] then return { 0, {} } end
if r[1] ~= 'dead' then return { -1, {} } end
redis.call('ZREM', K_DEAD, id)
redis.call('HSET', key, 's', 'pending', 'z', r[4])
if r[7] then redis.call('HDEL', key, 'f', 'fx') else redis.call('HDEL', key, 'f') end
if r[5] then report_up(id, r[5], r[6], 'p', '', now_ms()) end
if admit_one(r[2], r[3], id) then ring_doorbell() end
emit('reprocessed', id, 'g', r[2])
return { 1, outbox_written }
`,
  },
  resumeGroup: {
    name: "resumeGroup",
    sha1: "75ac22027efc2334094b64677184ff3b357aab5f",
    lua: `--[[
  resume-group: a paused group hands out work again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  Derives  emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1 resumed now, 0 was not paused
  Events   \`group-resumed\` (g) when it resumed the group (not when it was not paused)
  Rings    the doorbell when its lane went back on the ring
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- Put ring entry g on the ring, or take it off, to match whether it is serviceable now; \`on_ring\`
-- says whether it is on the ring before (for a group the script has just changed, whether it was
-- serviceable: the ring holds exactly the serviceable entries). Joining rings the doorbell, as
-- the lane's work just became claimable.
local function match_ring(g, on_ring)
  local serviceable = lane_serviceable(g)
  if serviceable and not on_ring then
    redis.call('RPUSH', K_RING, g)
    ring_doorbell()
  elseif on_ring and not serviceable then
    redis.call('LREM', K_RING, 0, g)
  end
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end

local g = ARGV[2]
local resumed = redis.call('SREM', K_GPAUSED, g)
-- a paused group is off the ring (pause-group took it off, and nothing puts back a paused one)
if resumed == 1 then
  match_ring(g, false)
  emit('group-resumed', nil, 'g', g)
end
return resumed
`,
  },
  resume: {
    name: "resume",
    sha1: "843d0a5acc82aaf05c46c52fde0b081815504f94",
    lua: `--[[
  resume: a paused queue hands out work again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  Reply    1 resumed now, 0 was not paused
  Events   \`resumed\` when it resumed the queue (not when it was not paused)
  Rings    the doorbell when it resumed and work is claimable
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end

local resumed = redis.call('HDEL', K_META, 'paused')
if resumed == 1 then
  if redis.call('LLEN', K_RING) > 0 then ring_doorbell() end
  emit('resumed')
end
return resumed
`,
  },
  retry: {
    name: "retry",
    sha1: "7979ac50915b5db154e668662e961db8edff1bd9",
    lua: `--[[
  retry: a leased job's attempt failed; fenced on (id, token). Back to its lane now, or to
  scheduled after its backoff (or an explicit delay), or dead once its attempts are used up.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] tuples of 5: id, token, error text, delayMs (-1 = the job's backoff), rand in [0, 1)
           for the backoff's jitter
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:minutes
           (each burial counted in its minute: includes/bury.lua)
  Reply    { {code, ...}, {outbox entries written: a flow child's death, for its parent} }: 1 scheduled for later, 2 claimable again now, 3 dead (attempts used up),
           0 fenced off (nothing changed). A repeat (the same id and token again: a reply lost
           and the request sent again) answers the code the first gave (1, 2 or 3) and writes
           nothing, whatever became of the job since short of a new claim or a remove
  Events   per job retried, in ARGV order, in one entry: \`retried\` (j, g, a, x the error, d when it
           is due again: now when it is claimable at once), or \`dead\` (j, g, a, x) when its
           attempts are used up; a fenced-off job or a repeat appends nothing
  Repeats  the retry leaves its outcome after the token in \`t\` (\`<token>/r<code>\`,
           includes/settled_token.lua). Only the holder of the token can write that mark (the
           fence) and a token is handed out once in the queue (invariant 4), so the mark means
           this very retry ran. What moves the row on keeps \`t\` as it is (promote, move-group,
           reprocess, which also leaves \`a\`: the repeat answers as the first did and must not
           write, the job having moved on) or rewrites it (a claim; remove deletes the row): then
           fenced. The reaper leaves the claim's bare token (it keeps \`a\` too), so a holder
           whose lease was reaped is fenced off, never taken for a repeat.
  Counts   meta \`retried\` += the jobs retried (not those buried), one HINCRBY a call (/metrics)
  Dedupe   a job buried releases its until-finished dedupe key, which leaves its row (bury)
  Errors   EMQKIND, EMQARG, raised before anything is written
  Rings    the doorbell when the job is claimable again now or a freed group slot made work
           claimable; the schedule bell when a retry is the earliest scheduled job
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- The fence: the row of job \`id\` if it is active under lease token \`token\` (its \`t\`), else nil
-- and the row's state and \`t\` (false when absent), for each_held's repeat check.
-- Returns {attempts, group or false, max attempts, attempts base, backoff, order score, dedupe key
-- \`dk\` or false, its ttl \`dt\` or false, a flow child's parent \`fp\` or false}, the defaults filled in for an absent \`m\` or \`b\`; an
-- active row always has its order (claim wrote it).
local function hold(id, token)
  local r = redis.call('HMGET', job_key(id), 's', 't', 'a', 'g', 'm', 'z', 'b', 'o', 'dk', 'dt', 'fp')
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  return { tonumber(r[3]), r[4], tonumber(r[5]) or DEFAULT_MAX_ATTEMPTS, tonumber(r[6] or '0'), r[7] or DEFAULT_BACKOFF, r[8], r[9], r[10], r[11] }
end
-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index \`first\`, \`stride\` values
-- each. \`fence(id, token)\` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token (then the row's state
-- and \`t\` after it); \`act(id, held, i)\` settles a held job (\`held\` what fence returned, \`i\` the index
-- of its id, its other values after it) and returns its code. A job not held is left as it was:
-- its code is \`again(token, state, t)\` (nil for a settle without one: 0), the code a repeat of
-- this settle answers when the row shows it already ran under that token (its reply was lost and
-- the request sent again), else 0, fenced off. Returns the codes in ARGV order. The caller runs
-- the ids through check_kind before: the kind door's errors come before any write, and act writes.
local function each_held(first, stride, fence, act, again)
  local codes = {}
  for i = first, #ARGV, stride do
    local id, token = ARGV[i], ARGV[i + 1]
    local held, state, t = fence(id, token)
    if held then
      codes[#codes + 1] = act(id, held, i)
    elseif again then
      codes[#codes + 1] = again(token, state, t)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end
-- The \`t\` a settle leaves in the row it moves out of active: the holder's lease token, '/', then
-- what the settle did, \`what\`: the script's letter and its reply code ('r1' retried for later,
-- 'r2' retried now, 'r3' buried by retry, 'f1' failed, 'g1' given back). A claim writes a bare
-- token and no other script writes a mark, so the mark says that this very settle ran: a repeat
-- of it (its reply lost, the request sent again) answers as it did and writes nothing
-- (includes/repeat_code.lua), where a holder whose lease the reaper took finds its token bare.
local function settled_token(token, what)
  return token .. '/' .. what
end
-- What a settle answers for a job it does not hold, from the row's \`t\`: when \`t\` is the mark this
-- settle leaves (settled_token(token, kind .. code), \`code\` one of \`codes\`), the settle already
-- ran under this token (a repeat of it: its reply was lost and the request sent again), so the code
-- it answered then; else 0, fenced off.
local function repeat_code(token, t, kind, codes)
  for _, code in ipairs(codes) do
    if t == settled_token(token, kind .. code) then return code end
  end
  return 0
end
-- Count \`g\` once in \`tally\`, {order = {groups in first-seen order}, [g] = count}: settling a
-- batch frees each group's slots in one step (free_slots) instead of one per job.
local function tally(t, g)
  if not g or g == '' then return end
  if not t[g] then
    t[g] = 0
    t.order[#t.order + 1] = g
  end
  t[g] = t[g] + 1
end
-- The deduplication key \`k\` of an enqueue (docs/design.md, "Deduplication"): emq:{q}:dd:<k>, a
-- string naming the job that holds the key. Same hash tag as every key of the queue.
local function dedupe_key(k)
  return PREFIX .. 'dd:' .. k
end
-- Release deduplication key \`k\` (a row's \`dk\`; nil or false: the job has none) held by job \`id\`:
-- its key is deleted only while it still names that job. It may name another by now: a ttl key
-- that expired and was taken again, or an until-finished key released when this job died and
-- taken by a new job before this one was reprocessed.
local function release_dedupe(id, k)
  if not k then return end
  local key = dedupe_key(k)
  if redis.call('GET', key) == id then redis.call('DEL', key) end
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The outbox (docs/design.md, "Flows"): what a script of this queue has to tell a job in another
-- slot. \`outbox_append(entry, now)\` adds an entry (score: when) and keeps it in \`outbox_written\`,
-- the entries of this call, which the scripts that write them return for their caller to relay
-- at once; a beat returns the ones left over (an entry stays until its relay acknowledges it, so
-- a runtime that dies before relaying delays the news, never loses it).
-- Entries: \`u|<child queue>|<child id>|<parent queue>|<parent id>|<policy>|<token>|<kind>|<body>\`
-- (a child's outcome, for its parent: includes/report_up.lua) and \`r|<parent queue>|<parent
-- id>|<child queue>|<child id>\` (a removed parent's unfinished child, to remove).
local outbox_written = {}
local function outbox_append(entry, now)
  redis.call('ZADD', K_OUTBOX, now, entry)
  outbox_written[#outbox_written + 1] = entry
end
-- A flow child's news for its parent, appended to this queue's outbox: job \`id\`, whose row's \`fp\`
-- is \`fp\` (\`<parent queue>|<parent id>|<policy>\`), ended its run under lease token \`token\` (a
-- row's \`t\`, marks such as \`7/r3\` read as 7; nil for none) as \`kind\`: \`c\` completed (\`body\` its
-- result JSON, '' none), \`d\` dead (\`body\` its error), \`p\` back to be run (reprocessed), \`x\` gone
-- (removed). The parent keeps the newest news per child (includes/child_record.lua), so an entry
-- applied twice, or after a newer one, changes nothing.
local function report_up(id, fp, token, kind, body, now)
  local t = string.match(token or '', '^%d+') or '0'
  outbox_append('u|' .. QUEUE_NAME .. '|' .. id .. '|' .. fp .. '|' .. t .. '|' .. kind .. '|' .. (body or ''), now)
end
-- A row about to be deleted (removed, drained, cleaned, trimmed) settles its flow links
-- (docs/design.md, "Flows"): an unfinished child (\`state\` not completed or dead) tells its parent
-- it is gone (\`fp\` its row's \`fp\`; nil when its parent asked for the removal, or it has none),
-- and a parent (\`fw\` its row's \`fw\`, nil for none) has each unfinished child removed through the
-- outbox and its children hash deleted. \`token\`: the row's \`t\` (nil for none).
local function forget_flow(id, state, fp, fw, token, now)
  if fp and state ~= 'completed' and state ~= 'dead' then report_up(id, fp, token, 'x', '', now) end
  if not fw then return end
  local kids = kids_key(id)
  local flat = redis.call('HGETALL', kids)
  for i = 1, #flat, 2 do
    local _, kind = child_record(flat[i + 1])
    if not child_done(kind) then outbox_append('r|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[i], now) end
  end
  redis.call('DEL', kids)
end
-- The queue's retention of dead jobs (meta \`dage\`: the most ms a dead job is kept, \`dmax\`: the
-- most dead jobs kept; set-dead-retention writes them), applied after a burial at \`now\`: at most
-- two of the oldest dead jobs past it are deleted, row and all. Two, not all: a burial does a
-- bounded amount of work, and a backlog (a retention just set or lowered) still shrinks by one
-- a burial; clean('dead') removes it at once. A queue without a retention pays one HMGET. A row
-- deleted releases its ttl dedupe key, as any removal does (an until-finished one went at death),
-- and a flow parent's unfinished children are removed (forget_flow), as removing it would.
local function trim_dead(now)
  local r = redis.call('HMGET', K_META, 'dage', 'dmax', 'fl')
  if not r[1] and not r[2] then return end
  local victims, seen = {}, {}
  local function add(ids)
    for _, id in ipairs(ids) do
      if not seen[id] and #victims < 2 then
        seen[id] = true
        victims[#victims + 1] = id
      end
    end
  end
  if r[1] then
    add(redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', string.format('%d', now - tonumber(r[1])), 'LIMIT', 0, 2))
  end
  if r[2] and #victims < 2 then
    local excess = redis.call('ZCARD', K_DEAD) - tonumber(r[2])
    if excess > 0 then add(redis.call('ZRANGE', K_DEAD, 0, math.min(excess, 2) - 1)) end
  end
  if #victims == 0 then return end
  for _, id in ipairs(victims) do
    if r[3] then
      local row = redis.call('HMGET', job_key(id), 'dk', 'fw')
      release_dedupe(id, row[1])
      if row[2] then forget_flow(id, 'dead', nil, row[2], nil, now) end
    else
      release_dedupe(id, redis.call('HGET', job_key(id), 'dk'))
    end
    redis.call('DEL', job_key(id))
  end
  redis.call('ZREM', K_DEAD, unpack(victims))
end
-- A job that held deduplication key \`k\` (its row's \`dk\`; nil or false: none) in until-finished
-- mode (no \`dt\`, the row's ttl) has finished: completed or dead. The key is released, so the next
-- enqueue with it adds a job; \`forget\` (a dead job's row stays) also takes \`dk\` off the row, so a
-- reprocessed job does not claim a key it no longer holds. A ttl key is left to expire.
local function release_settled(id, k, ttl, forget)
  if not k or ttl then return end
  release_dedupe(id, k)
  if forget then redis.call('HDEL', job_key(id), 'dk') end
end
-- Count \`n\` (>= 1) jobs of kind \`kind\` ('c' completed, 'd' sent to dead) in the minute of \`now\`
-- (the script's server ms) in K_MINUTES, field \`<kind><minute>\`, minute = floor(now / 60000):
-- the per-minute buckets of the last hour counts.lua reads (docs/design.md, "Keyspace"). One
-- HINCRBY a call; only the first write of its kind in a minute (HINCRBY answers n: the field was
-- new) also drops the fields more than 60 minutes older than this one (HKEYS over at most 122
-- fields, one HDEL) and sets the key to expire 61 minutes after this minute starts, a minute after
-- its newest field has left every reader's hour: so a queue gone idle leaves no key behind. At
-- most three commands more per kind and minute: amortised, one command a call.
local function count_minute(kind, n, now)
  local minute = math.floor(now / 60000)
  if redis.call('HINCRBY', K_MINUTES, kind .. string.format('%d', minute), n) ~= n then return end
  local oldest, old = minute - 60, {}
  for _, field in ipairs(redis.call('HKEYS', K_MINUTES)) do
    local m = tonumber(string.sub(field, 2))
    if not m or m < oldest then old[#old + 1] = field end
  end
  if #old > 0 then redis.call('HDEL', K_MINUTES, unpack(old)) end
  redis.call('PEXPIREAT', K_MINUTES, string.format('%d', (minute + 61) * 60000))
end
-- Move job \`id\`, already out of every other set, to dead with its last error; count it in
-- meta.buried (dead jobs ever, for metrics: the dead set shrinks on reprocess and remove) and in
-- its minute's bucket (count_minute: every way to dead comes through here, the reaper's too), then
-- apply the queue's retention of dead jobs (trim_dead), which may delete this very row when the
-- retention keeps none.
-- \`mark\`: the \`t\` the settle that buries it leaves (settled_token), nil for the reaper, which
-- leaves the claim's bare token so the holder it took the lease from stays fenced off.
-- \`dk\`, \`dt\`: the row's dedupe key and its ttl (false or nil: none): an until-finished key is
-- released and leaves the row (release_settled), so a reprocess does not take it again.
-- \`fp\`, \`token\`: a flow child's parent (its row's \`fp\`; nil for none) and the lease token of the
-- run that died (nil: none), for the news its parent gets through the outbox (report_up).
local function bury(id, err, now, mark, dk, dt, fp, token)
  release_settled(id, dk, dt, true)
  if fp then report_up(id, fp, token, 'd', err, now) end
  redis.call('ZADD', K_DEAD, now, id)
  redis.call('HINCRBY', K_META, 'buried', 1)
  count_minute('d', 1, now)
  if mark then
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now, 't', mark)
  else
    redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now)
  end
  trim_dead(now)
end
-- The delay before retry number \`attempts\` under backoff spec "<f|e>,<delayMs>,<capMs>,<jitter>":
-- fixed or exponential (delay * 2^(attempts-1)), capped, then reduced by up to \`jitter\` of
-- itself using \`rand\` in [0, 1) supplied by the caller (Lua's PRNG is not random on every host).
-- An absent spec (a row on the defaults) is DEFAULT_BACKOFF. A spec it cannot read (a row edited
-- by hand) backs off like the default spec too, never "no delay": raising an error here would
-- leave the retry half done.
local function backoff_delay(spec, attempts, rand)
  local pattern = '^([fe]),(%d+),(%d+),([%d.eE+-]+)$'
  local kind, base, cap, jitter = string.match(spec or DEFAULT_BACKOFF, pattern)
  if not kind or not tonumber(jitter) then
    kind, base, cap, jitter = string.match(DEFAULT_BACKOFF, pattern)
  end
  local d = tonumber(base)
  if kind == 'e' then d = d * 2 ^ math.min(attempts - 1, 52) end
  d = math.min(d, tonumber(cap))
  return math.floor(d - d * tonumber(jitter) * rand)
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- The entries of \`entries\` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- The tail every settle shares: free the group slots counted in \`freed\` (tally), then admit the
-- jobs collected in \`batch\` (batch_push; nil when nothing goes back to a lane). Slots first: a
-- lane that gets its job back and a freed slot goes on the ring once. Returns true when either
-- made work claimable; the caller rings the doorbell, once (beat rings once for its reaping and
-- its promotion together, so this does not ring itself).
local function free_and_admit(freed, batch)
  local woke = free_slots(freed)
  if batch and admit(batch) then woke = true end
  return woke
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- The schedule bell: when one of \`ids\` (a set: id -> true) just became the earliest scheduled job,
-- push a token onto \`sched\` (at most 64) so a parked consumer re-reads the next due time and sets
-- its timer. Nothing is claimable yet, so the doorbell stays quiet.
local function ring_sched_bell(ids)
  local head = redis.call('ZRANGE', K_SCHEDULED, 0, 0)[1]
  if head and ids[head] then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

for i = 2, #ARGV, 5 do
  check_kind(ARGV[i])
  arg_int(ARGV[i + 3], 'delayMs', -1)
end

local now = now_ms()
local freed, batch, later = { order = {} }, { order = {} }, {}
local outcomes = { 1, 2, 3 }
local retried = 0
local codes = each_held(2, 5, hold, function(id, row, i)
  local attempts, group, max_attempts, base, backoff, order = unpack(row)
  local token, err = ARGV[i + 1], ARGV[i + 2]
  redis.call('ZREM', K_ACTIVE, id)
  tally(freed, group)
  local attempt = attempts - base
  if attempts - base >= max_attempts then
    bury(id, err, now, settled_token(token, 'r3'), row[7], row[8], row[9], token)
    collect_event('dead', id, 'g', group, 'a', attempt, 'x', err)
    return 3
  end
  local delay = tonumber(ARGV[i + 3])
  if delay < 0 then delay = backoff_delay(backoff, attempts - base, tonumber(ARGV[i + 4]) or 0) end
  local key = job_key(id)
  if delay > 0 then
    redis.call('ZADD', K_SCHEDULED, now + delay, id)
    later[id] = true
    redis.call('HSET', key, 's', 'scheduled', 'e', err, 't', settled_token(token, 'r1'))
    -- %.0f: a delay may be any size (an explicit one is not capped), where %d would overflow
    collect_event('retried', id, 'g', group, 'a', attempt, 'x', err, 'd', string.format('%.0f', now + delay))
    retried = retried + 1
    return 1
  end
  redis.call('HSET', key, 's', 'pending', 'e', err, 't', settled_token(token, 'r2'))
  batch_push(batch, group, order, id)
  collect_event('retried', id, 'g', group, 'a', attempt, 'x', err, 'd', string.format('%d', now))
  retried = retried + 1
  return 2
end, function(token, _, t)
  return repeat_code(token, t, 'r', outcomes)
end)
if free_and_admit(freed, batch) then ring_doorbell() end
if next(later) then ring_sched_bell(later) end
-- the counter of retries for /metrics: once a call, not once a job
if retried > 0 then redis.call('HINCRBY', K_META, 'retried', retried) end
flush_events()
return { codes, outbox_written }
`,
  },
  sendEvent: {
    name: "sendEvent",
    sha1: "a17b773e79149b961786ca7bb5424bcf26b598c4",
    lua: `--[[
  send-event: deliver an event to the jobs of this queue waiting for it (docs/design/steps.md,
  "Waiting for an event"), in one script: every job whose wait matches it resumes, its step
  recording the event's data, and it is kept for \`keepMs\` for waits that begin after it (a wait
  recorded a moment later than the event it was for still takes it).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the event's name (letters, digits and \`._-\`, checked by the caller)
  ARGV[3]  its data, JSON text
  ARGV[4]  its id for deduplication ('' for none): the same id again within a day (or keepMs,
           when longer) answers as the first send did and writes nothing
  ARGV[5]  keepMs (>= 0): how long it is kept for waits that begin later; 0 for none
  Derives  emq:{q}:shapes:<name>, emq:{q}:on:<name>:<hash>, emq:{q}:job:<id>, emq:{q}:steps:<id>,
           emq:{q}:awaiting, emq:{q}:kept:<name>, emq:{q}:keptd:<name> (the kept events: at most
           1000 of a name, the oldest dropped first), emq:{q}:evid:<name>:<id>, lanes
  Reply    {the event's id (the caller's, or its sequence number in the queue), jobs resumed}
  Events   \`step\` (j, g, n the step's name, s done) per job resumed, in one entry
  Errors   EMQARG (data that is not JSON, a malformed keepMs), before anything is written
  Rings    the doorbell when a resumed job is claimable now
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- Where durable waits for events meet the events (docs/design/steps.md, "Waiting for an event").
-- A wait's match is a shape, its paths into the event's data joined by newlines (sorted: '' for
-- none), and the values the data must have there. Waiters of \`event\` whose match hashes to h are
-- in the zset waiters_key(event, h) (score: when they began); the shapes waiters of \`event\` use
-- are in the set shapes_key(event), so a sent event is hashed once per shape, never compared
-- with each waiter. Kept events (a send's \`keepMs\`, for waits that begin after it) are in
-- kept_key(event) (a zset: member the event's sequence number, score when it stops being kept)
-- and kept_data_key(event) (a hash: sequence number -> "<event id> <sent ms> <arrivals> <data JSON>",
-- arrivals the queue's arrival sequence, meta \`seq\`, when it was sent: what orders it against a job
-- created in the same ms).
local function waiters_key(event, hash)
  return PREFIX .. 'on:' .. event .. ':' .. hash
end
local function shapes_key(event)
  return PREFIX .. 'shapes:' .. event
end
local function kept_key(event)
  return PREFIX .. 'kept:' .. event
end
local function kept_data_key(event)
  return PREFIX .. 'keptd:' .. event
end
-- The hash of a match: its shape and its values (a Lua array) encoded by cjson, the same encoder
-- for a waiter's values (decoded from the caller's JSON) and for a sent event's (read from its
-- data), so 1 and 1.0 are one value.
local function match_hash(shape, values)
  return redis.sha1hex(shape .. '\\n' .. cjson.encode(values))
end
-- The values at \`shape\`'s paths in decoded \`data\` (each path its object keys joined by dots):
-- cjson.null where the data has no scalar there, which no waiter's value equals.
local function values_at(data, shape)
  local out = {}
  if shape == '' then return out end
  for path in string.gmatch(shape, '[^\\n]+') do
    local v = data
    for part in string.gmatch(path, '[^.]+') do
      if type(v) == 'table' then v = v[part] else v = nil end
    end
    if v == nil or type(v) == 'table' then v = cjson.null end
    out[#out + 1] = v
  end
  return out
end
-- Rewrite step \`index\` of job \`id\` (its record, JSON: n name, k kind, s state, r result as JSON
-- text, e error, a attempts, st and ft started and finished ms, u until ms, ev event, ei the
-- event's id, cq and ci an invoked child) with \`fields\` set on it (a value false deletes the
-- field). Returns the record as written, nil when the job has no such step. Only the records a
-- suspension or its end rewrite come through here (a sleep's, a wait's, an invoke's): a run
-- step's result is written whole by step.lua, never decoded by a script.
local function step_update(id, index, fields)
  local key = step_key(id)
  local text = redis.call('HGET', key, index)
  if not text then return nil end
  local record = cjson.decode(text)
  for f, v in pairs(fields) do
    if v == false then record[f] = nil else record[f] = v end
  end
  redis.call('HSET', key, index, cjson.encode(record))
  return record
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- A suspended job goes back to be claimed (docs/design/steps.md): the step it waited on (its
-- row's \`sw\`, kind letter then index) is rewritten with \`fields\`, the row leaves its suspension
-- (\`sw\`, and \`wk\` the waiters zset of a wait, whose member it stops being), and it joins its lane
-- in its place (\`batch\`, admitted by the caller). \`row\` is {group or false, order} as read.
-- Collects a \`step\` event (j, g, n the step's name, s its new state).
local function resume_step(id, sw, wk, row, fields, batch)
  local key = job_key(id)
  local record = step_update(id, string.sub(sw, 2), fields)
  if wk then
    redis.call('ZREM', wk, id)
    redis.call('ZREM', PREFIX .. 'awaiting', id)
    redis.call('HDEL', key, 'sw', 'wk')
  else
    redis.call('HDEL', key, 'sw')
  end
  redis.call('HSET', key, 's', 'pending')
  batch_push(batch, row[1], row[2], id)
  collect_event('step', id, 'g', row[1], 'n', record and record.n, 's', record and record.s)
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

local name, data, given, keep_ms = ARGV[2], ARGV[3], ARGV[4], arg_int(ARGV[5], 'keepMs', 0)
local ok, decoded = pcall(cjson.decode, data)
if not ok then error(redis.error_reply('EMQARG the event data is not JSON')) end
local seen_key = given ~= '' and PREFIX .. 'evid:' .. name .. ':' .. given or nil
if seen_key then
  local seen = redis.call('GET', seen_key)
  if seen then return cjson.decode(seen) end
end

local now = now_ms()
local seq = redis.call('HINCRBY', K_META, 'evseq', 1)
local seq_text = string.format('%d', seq)
local event_id = given ~= '' and given or seq_text
local batch = { order = {} }
local resumed = 0
for _, shape in ipairs(redis.call('SMEMBERS', shapes_key(name))) do
  local wk = waiters_key(name, match_hash(shape, values_at(decoded, shape)))
  local ids = redis.call('ZRANGE', wk, 0, -1)
  for _, id in ipairs(ids) do
    local r = redis.call('HMGET', job_key(id), 's', 'sw', 'g', 'o')
    if r[1] == 'awaiting' and r[2] and string.sub(r[2], 1, 1) == 'w' then
      resume_step(id, r[2], wk, { r[3], r[4] }, { s = 'done', r = data, ei = event_id, ft = now }, batch)
      redis.call('HSET', step_key(id), 'ev:' .. name, seq_text)
      resumed = resumed + 1
    else
      -- a waiter that is no longer one (removed, or its row another job's now)
      redis.call('ZREM', wk, id)
    end
  end
end
if keep_ms > 0 then
  local kept, kept_data = kept_key(name), kept_data_key(name)
  -- what is no longer kept goes first, then the oldest past 1000
  local gone = redis.call('ZRANGEBYSCORE', kept, '-inf', now)
  local over = redis.call('ZCARD', kept) - #gone - 999
  if over > 0 then
    local oldest = redis.call('ZRANGEBYSCORE', kept, now, '+inf')
    table.sort(oldest, function(a, b) return tonumber(a) < tonumber(b) end)
    for k = 1, over do gone[#gone + 1] = oldest[k] end
  end
  if #gone > 0 then
    redis.call('ZREM', kept, unpack(gone))
    redis.call('HDEL', kept_data, unpack(gone))
  end
  redis.call('SADD', PREFIX .. 'evnames', name)
  redis.call('ZADD', kept, now + keep_ms, seq_text)
  local arrivals = redis.call('HGET', K_META, 'seq') or '0'
  redis.call('HSET', kept_data, seq_text, event_id .. ' ' .. string.format('%d', now) .. ' ' .. arrivals .. ' ' .. data)
  local last = tonumber(redis.call('ZRANGE', kept, -1, -1, 'WITHSCORES')[2])
  redis.call('PEXPIREAT', kept, last)
  redis.call('PEXPIREAT', kept_data, last)
end
if admit(batch) then ring_doorbell() end
local reply = { event_id, resumed }
if seen_key then redis.call('SET', seen_key, cjson.encode(reply), 'PX', math.max(keep_ms, 86400000)) end
flush_events()
return reply
`,
  },
  setDeadRetention: {
    name: "setDeadRetention",
    sha1: "f26c237926da61ecc5071b27e5bd828c4a14c895",
    lua: `--[[
  set-dead-retention: how long dead jobs are kept and how many, a setting of the queue stored in
  its meta (\`dage\`, \`dmax\`), so every runtime that buries a job applies the same one
  (includes/trim_dead.lua: each burial deletes at most two of the oldest dead jobs past it).
  Setting it deletes nothing by itself: clean('dead') removes a backlog at once.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  maxAgeMs (>= 0), or -1 for no age limit
  ARGV[3]  maxCount (>= 0), or -1 for no count limit
  Reply    {maxAgeMs or -1, maxCount or -1}: the retention now
  Errors   EMQARG (a malformed number), before anything is written
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end

local age = arg_int(ARGV[2], 'maxAgeMs', -1)
local count = arg_int(ARGV[3], 'maxCount', -1)
if age < 0 then redis.call('HDEL', K_META, 'dage') else redis.call('HSET', K_META, 'dage', string.format('%d', age)) end
if count < 0 then redis.call('HDEL', K_META, 'dmax') else redis.call('HSET', K_META, 'dmax', string.format('%d', count)) end
return { age, count }
`,
  },
  setEvents: {
    name: "setEvents",
    sha1: "225923c48069229a493e22ba81100364af72efe5",
    lua: `--[[
  set-events: the queue's events settings, stored in its meta so every runtime's scripts apply the
  same ones (includes/events_settings.lua reads them once per call): \`ecap\`, the stream's MAXLEN
  (about how many entries it keeps; 0 turns events off), and \`erb\`, the most bytes of a result a
  \`completed\` event carries. A cap of 0 deletes the stream at once (with events off there is no
  stream); a lower cap trims it at once to about that many entries (XTRIM MAXLEN ~, unlimited:
  an XADD trims at most 100 macro nodes a call), so the stream is within its cap when this returns.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  maxLen (0 to 10000000), or -1 to leave it as it is
  ARGV[3]  resultBytes (0 to 1048576), or -1 to leave it as it is
  Reply    {maxLen, resultBytes}: the settings now
  Errors   EMQARG (a malformed or out-of-range number), before anything is written
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end

local max_len = arg_int(ARGV[2], 'maxLen', -1)
local result_bytes = arg_int(ARGV[3], 'resultBytes', -1)
if max_len > 10000000 then error(redis.error_reply('EMQARG maxLen must be at most 10000000, got ' .. ARGV[2])) end
if result_bytes > 1048576 then error(redis.error_reply('EMQARG resultBytes must be at most 1048576, got ' .. ARGV[3])) end
if max_len >= 0 then
  local cap = string.format('%d', max_len)
  redis.call('HSET', K_META, 'ecap', cap)
  if max_len == 0 then
    redis.call('DEL', K_EVENTS)
  else
    redis.call('XTRIM', K_EVENTS, 'MAXLEN', '~', cap, 'LIMIT', 0)
  end
end
if result_bytes >= 0 then redis.call('HSET', K_META, 'erb', string.format('%d', result_bytes)) end
local cap, bytes = events_settings()
return { tonumber(cap), bytes }
`,
  },
  setRate: {
    name: "setRate",
    sha1: "a659d6686221539c9ad56e29f683c8b5228f71e0",
    lua: `--[[
  set-rate: set the rate limit of the queue or of group g (at most \`limit\` job starts in any
  window of \`periodMs\`, on the server's clock), or lift it. Live: a raised or lifted limit that
  lets the entry start again readmits it now; a lowered one that it is over throttles it now.
  Starts before a limit was set are not counted (the log is written only while there is one);
  lifting one deletes its log.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the entry: a group, or "!" for the queue's own limit
  ARGV[3]  limit (>= 1), or -1 to lift it
  ARGV[4]  periodMs (>= 1; ignored when lifting)
  Derives  emq:{q}:grate, emq:{q}:holds, emq:{q}:starts[:<group>], emq:{q}:lane:<group>,
           emq:{q}:fifo[:<group>]
  Reply    1
  Events   \`rate\` (g for a group, l the limit and p the period, both '' when lifted) when the
           limit changed (setting the one it has appends nothing)
  Errors   EMQARG
  Rings    the doorbell when the change let throttled work start; the schedule bell when the
           entry's new throttle time is the queue's next due time
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The log of \`entry\`'s recent job starts (a zset: member a lease token, score the start's server
-- ms): emq:{q}:starts for the queue's own rate limit, emq:{q}:starts:<g> for group g's.
local function starts_key(entry)
  if entry == QUEUE_ENTRY then return PREFIX .. 'starts' end
  return PREFIX .. 'starts:' .. entry
end
-- The stored rate limit of \`entry\` ("limit:periodMs"): QUEUE_ENTRY's in meta \`rate\`, a group's in
-- K_GRATE; false when it has none (ungrouped work has none of its own).
local function rate_spec(entry)
  if entry == QUEUE_ENTRY then return redis.call('HGET', K_META, 'rate') end
  if entry == UNGROUPED then return false end
  return redis.call('HGET', K_GRATE, entry)
end
-- A stored rate limit, "limit:periodMs", as two numbers; nil for none (nil or false) or anything else.
local function parse_rate(spec)
  local limit, period = string.match(spec or '', '^(%d+):(%d+)$')
  if not limit then return nil end
  return tonumber(limit), tonumber(period)
end
-- The rate limit of \`entry\` (QUEUE_ENTRY for the queue's own): limit and period in ms, or nil
-- when it has none.
local function rate_of(entry)
  return parse_rate(rate_spec(entry))
end
-- How many jobs \`entry\` started within the window of \`period\` ms that ends now: its starts log
-- trimmed to the starts after now - period (a start at s counts until s + period), then counted.
local function rate_used(entry, period, now)
  local key = starts_key(entry)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - period))
  return redis.call('ZCARD', key)
end
-- When \`entry\` may start one more job under its rate limit (\`limit\` starts per \`period\` ms): now
-- when fewer than \`limit\` starts are in the window, else the time enough of them leave it that
-- one more fits (the (used - limit + 1)th oldest start plus the period).
local function rate_due(entry, limit, period, now)
  local used = rate_used(entry, period, now)
  if used < limit then return now end
  local at = redis.call('ZRANGE', starts_key(entry), used - limit, used - limit, 'WITHSCORES')[2]
  return tonumber(at) + period
end
-- When ring entry \`entry\` (or QUEUE_ENTRY) may start a job again, as far as its hold and its rate
-- limit say (its pause, concurrency limit and lane aside): a time <= now means it may now.
local function closed_until(entry, now)
  local at = tonumber(redis.call('HGET', K_HOLDS, entry)) or 0
  local limit, period = rate_of(entry)
  if limit then
    local due = rate_due(entry, limit, period, now)
    if due > at then at = due end
  end
  return at
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- A throttled entry whose hold and rate limit let it start again: out of K_THROTTLED (its hold,
-- over, forgotten), and a ring entry back on the ring when its lane is serviceable. Returns true
-- when work became claimable (for QUEUE_ENTRY: the ring has entries); the caller rings the doorbell.
local function reopen(entry)
  redis.call('ZREM', K_THROTTLED, entry)
  redis.call('HDEL', K_HOLDS, entry)
  if entry == QUEUE_ENTRY then return redis.call('LLEN', K_RING) > 0 end
  if lane_serviceable(entry) then
    redis.call('RPUSH', K_RING, entry)
    return true
  end
  return false
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- The earliest next slot of any scheduler (ms), or -1 when none will fire: a scheduler that fires
-- no more waits in \`schedulers\` with the score +inf, which Redis answers as "inf". A queue that
-- never made a scheduler (meta \`sc\` unset) has none: nothing is read.
local function first_slot()
  if not queue_meta().sc then return -1 end
  local score = redis.call('ZRANGE', K_SCHEDULERS, 0, 0, 'WITHSCORES')[2]
  if score == nil or score == 'inf' then return -1 end
  return tonumber(score)
end
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then. The throttled entries are read only once
-- any was (meta \`th\`), the waits' timeouts once a step was (meta \`st\`).
-- The earliest timeout of a wait for an event (a wait without one scores +inf): -1 for none.
local function first_timeout()
  local at = tonumber(redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  return at or -1
end
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), queue_meta().th and first_score(K_THROTTLED) or -1,
    queue_meta().st and first_timeout() or -1 }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- The schedule bell for a time \`at\` (ms) that was just written (a scheduler's next slot): when it
-- is now the next due time of the queue, push a token onto \`sched\` so a parked consumer re-reads
-- the next due time and sets its timer (a slot already due runs a beat at once).
local function ring_sched_bell_at(at)
  if at >= 0 and next_due() == at then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
-- Throttle \`entry\` (a ring entry, or QUEUE_ENTRY) until \`at\` (ms): into K_THROTTLED at that score,
-- or at its later one if it is there already (a throttled entry is off the ring; the caller takes
-- it off). \`at\` is a due time the scripts know (includes/next_due.lua): when it is the queue's
-- next one the schedule bell rings, so parked consumers set their timers for it. The queue's
-- first throttle sets meta \`th\`, under which the scripts read \`throttled\` at all.
local function throttle(entry, at)
  mark_feature('th')
  redis.call('ZADD', K_THROTTLED, 'GT', string.format('%d', at), entry)
  ring_sched_bell_at(at)
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end
-- Append one event to the queue's events stream now (see collect_event for the arguments), with
-- any events collected before it in the same entry, in order. For a script that makes one
-- transition per call (pause, remove, progress...); a batch collects its events and flushes once.
local function emit(event, id, ...)
  collect_event(event, id, ...)
  flush_events()
end

local entry = ARGV[2]
local limit = arg_int(ARGV[3], 'limit', -1)
if limit == 0 then error(redis.error_reply('EMQARG limit must be an integer >= 1, or -1 to lift it, got 0')) end
local period = 0
if limit > 0 then period = arg_int(ARGV[4], 'periodMs', 1) end
local set = limit > 0 and string.format('%d:%d', limit, period) or false
if rate_spec(entry) == set then return 1 end
if entry == QUEUE_ENTRY then
  if set then redis.call('HSET', K_META, 'rate', set) else redis.call('HDEL', K_META, 'rate') end
else
  if set then redis.call('HSET', K_GRATE, entry, set) else redis.call('HDEL', K_GRATE, entry) end
  -- how many groups have one: claims read the groups' limits only when some group does
  local grates = redis.call('HLEN', K_GRATE)
  if grates > 0 then redis.call('HSET', K_META, 'grates', grates) else redis.call('HDEL', K_META, 'grates') end
end
if not set then redis.call('DEL', starts_key(entry)) end

-- the entry's throttle under the new limit: readmitted, moved, or begun
local now = now_ms()
local at = closed_until(entry, now)
local throttled = redis.call('ZSCORE', K_THROTTLED, entry)
if at > now then
  if throttled then redis.call('ZADD', K_THROTTLED, string.format('%d', at), entry) end
  throttle(entry, at)
  if entry ~= QUEUE_ENTRY then redis.call('LREM', K_RING, 0, entry) end
elseif throttled and reopen(entry) then
  ring_doorbell()
end
emit('rate', nil, 'g', entry ~= QUEUE_ENTRY and entry or nil, 'l', set and string.format('%d', limit) or '', 'p', set and string.format('%d', period) or '')
return 1
`,
  },
  step: {
    name: "step",
    sha1: "94fe8e2a19deaa7567264466bfff142b0735b891",
    lua: `--[[
  step: record durable steps of leased jobs (docs/design/steps.md), each fenced on (id, token): a
  step's result is written before its handler goes on, so a later run of the job returns it
  without running the step again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] tuples of 7: id, token, the step's index (1, 2, ... in the order the handler called its
           steps), what is written (\`d\` a run step done, \`f\` a run step that threw, \`i\` an
           invoke about to enqueue its child), how long the step ran in ms (its record's \`st\` is
           the server's time less this; \`ft\` the server's time), the step's name (for its
           event), the record: a JSON object
           without \`st\` and \`ft\` (n name, k kind, s state, r result as JSON text, e error, a
           attempts; an invoke's cq and ci its child's queue and id)
  Derives  emq:{q}:job:<id>, emq:{q}:steps:<id>, emq:{q}:kids:<id> (an invoke: its child's
           record \`0|w|\`, and the row's \`fw\` and \`fd\` counted again, so the child's news counts
           however early it comes: docs/design/flows.md)
  Reply    per tuple, in ARGV order: 1 written, 0 fenced off (nothing written: the job is not
           active under that token). A tuple sent again while its job is still held writes the
           same record again
  Attempts a step done restarts the job's attempts: the row's \`z\` becomes \`a\` less 1, so the next
           failure is attempt 1 of the next step (each step has the job's \`maxAttempts\`)
  Events   \`step\` (j, g, n the step's name, s its state: done or failed) per run step written, in
           one entry (an invoke's is its suspension's)
  Errors   EMQKIND, EMQARG (an index below 1, a kind not d, f or i), before anything is written
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- The fence: the row of job \`id\` if it is active under lease token \`token\` (its \`t\`), else nil
-- and the row's state and \`t\` (false when absent), for each_held's repeat check.
-- Returns {attempts, group or false, max attempts, attempts base, backoff, order score, dedupe key
-- \`dk\` or false, its ttl \`dt\` or false, a flow child's parent \`fp\` or false}, the defaults filled in for an absent \`m\` or \`b\`; an
-- active row always has its order (claim wrote it).
local function hold(id, token)
  local r = redis.call('HMGET', job_key(id), 's', 't', 'a', 'g', 'm', 'z', 'b', 'o', 'dk', 'dt', 'fp')
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  return { tonumber(r[3]), r[4], tonumber(r[5]) or DEFAULT_MAX_ATTEMPTS, tonumber(r[6] or '0'), r[7] or DEFAULT_BACKOFF, r[8], r[9], r[10], r[11] }
end
-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index \`first\`, \`stride\` values
-- each. \`fence(id, token)\` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token (then the row's state
-- and \`t\` after it); \`act(id, held, i)\` settles a held job (\`held\` what fence returned, \`i\` the index
-- of its id, its other values after it) and returns its code. A job not held is left as it was:
-- its code is \`again(token, state, t)\` (nil for a settle without one: 0), the code a repeat of
-- this settle answers when the row shows it already ran under that token (its reply was lost and
-- the request sent again), else 0, fenced off. Returns the codes in ARGV order. The caller runs
-- the ids through check_kind before: the kind door's errors come before any write, and act writes.
local function each_held(first, stride, fence, act, again)
  local codes = {}
  for i = first, #ARGV, stride do
    local id, token = ARGV[i], ARGV[i + 1]
    local held, state, t = fence(id, token)
    if held then
      codes[#codes + 1] = act(id, held, i)
    elseif again then
      codes[#codes + 1] = again(token, state, t)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- The children hash of parent \`id\` (docs/design.md, "Flows"): field \`<queue>|<id>\` per child ->
-- its record \`<token>|<kind>|<body>\` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
-- A parent's record of one child (the value in its children hash, includes/kids_key.lua):
-- \`<token>|<kind>|<body>\`, the token of the child's run the news is about and what became of it:
-- \`w\` not finished yet (written with the parent, token 0), \`p\` back to be run (reprocessed), \`c\`
-- completed (body: its result), \`d\` failed and counted (body: its error), \`f\` failed and failed
-- the parent, \`x\` gone from a parent not yet written. News about a later run (a higher token)
-- replaces a record, and at the same token \`p\` replaces \`c\`, \`d\` and \`f\`, and \`x\` replaces all.
-- Returns the record's token, kind and body; token -1 for none.
local CHILD_RANK = { w = 0, c = 1, d = 1, f = 1, p = 2, x = 3 }
local function child_record(value)
  if not value then return -1, nil, nil end
  local bar = string.find(value, '|', 1, true)
  return tonumber(string.sub(value, 1, bar - 1)), string.sub(value, bar + 1, bar + 1), string.sub(value, bar + 3)
end
-- Whether news (token, kind) is newer than the record \`old\` (a value, or nil/false for none).
local function child_news(token, kind, old)
  local t, k = child_record(old)
  if token ~= t then return token > t end
  return CHILD_RANK[kind] > CHILD_RANK[k]
end
-- Whether a record's kind counts as finished for its parent.
local function child_done(kind)
  return kind == 'c' or kind == 'd' or kind == 'f'
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

for i = 2, #ARGV, 7 do
  check_kind(ARGV[i])
  arg_int(ARGV[i + 2], 'step index', 1)
  local kind = ARGV[i + 3]
  if kind ~= 'd' and kind ~= 'f' and kind ~= 'i' then
    error(redis.error_reply('EMQARG step kind must be d, f or i, got ' .. tostring(kind)))
  end
  arg_int(ARGV[i + 4], 'step ms', 0)
end

local now = now_ms()
local now_text = string.format('%d', now)
local codes = each_held(2, 7, hold, function(id, row, i)
  local attempts, group = row[1], row[2]
  local index, kind, ms, name, record = ARGV[i + 2], ARGV[i + 3], tonumber(ARGV[i + 4]), ARGV[i + 5], ARGV[i + 6]
  local key = job_key(id)
  mark_feature('st')
  -- the times appended to the caller's object: its result is never decoded here
  local written = string.sub(record, 1, -2) .. ',"st":' .. string.format('%d', now - ms) .. ',"ft":' .. now_text .. '}'
  redis.call('HSET', step_key(id), index, written)
  if kind == 'd' then
    redis.call('HSET', key, 'sn', '1', 'z', string.format('%d', attempts - 1))
  else
    redis.call('HSET', key, 'sn', '1')
  end
  local state = 'done'
  if kind == 'f' then state = 'failed' end
  if kind == 'i' then
    state = 'invoking'
    local child = cjson.decode(record)
    local kids = kids_key(id)
    redis.call('HSETNX', kids, child.cq .. '|' .. child.ci, '0|w|')
    redis.call('PERSIST', kids)
    local total, done = 0, 0
    for _, v in ipairs(redis.call('HVALS', kids)) do
      local _, k = child_record(v)
      total = total + 1
      if child_done(k) then done = done + 1 end
    end
    mark_feature('fl')
    redis.call('HSET', key, 'fw', string.format('%d', total), 'fd', string.format('%d', done))
  end
  -- an invoke's own event is its suspension's (suspend.lua), which follows the child's enqueue
  if kind ~= 'i' then collect_event('step', id, 'g', group, 'n', name, 's', state) end
  return 1
end)
flush_events()
return codes
`,
  },
  suspend: {
    name: "suspend",
    sha1: "0f5ecdb7969ebe0bdfe7c856652c9baa1f2bc609",
    lua: `--[[
  suspend: leased jobs whose handlers reached a durable sleep, a wait for an event or an invoke
  (docs/design/steps.md) leave active, each fenced on (id, token), holding no slot and no lease,
  with their steps kept: a sleep to scheduled until its due time (server clock), a wait to
  awaiting until a matching event or its timeout, an invoke to waiting (a flow parent) until its
  child finishes. The claim that suspended is not counted as an attempt (the row's \`z\` + 1).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] tuples of 9: id, token, the step's index, how (\`s\` sleep for ms, \`u\` sleep until an
           epoch ms, \`w\` wait for an event, \`i\` wait for the invoked child), the step's name,
           a number (s: the ms to sleep; u: the epoch ms; w: the timeout in ms, -1 for none;
           i: unused), the event (w), the match's shape and its values as a JSON array (w:
           includes/event_match.lua; '' and '[]' for none)
  Derives  emq:{q}:job:<id>, emq:{q}:steps:<id>, emq:{q}:sleeping (sleepers by due time, an
           index beside scheduled: stats counts it), emq:{q}:awaiting (waits by timeout, +inf
           for none), emq:{q}:on:<event>:<hash>, emq:{q}:shapes:<event>, emq:{q}:kept:<event>,
           emq:{q}:keptd:<event>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:waiting
  Reply    per tuple: 1 scheduled (sleeping), 2 claimable now (a sleep already due, a kept event
           that matched, an invoked child already finished), 3 awaiting an event, 4 waiting for
           its child, 0 fenced off (nothing changed). A repeat (its reply lost) answers the
           first's code and writes nothing, by the mark it leaves after the token (\`/s<code>\`)
  A wait   takes the earliest kept event of its name that matches, was sent after the job was
           created (within one ms, by the queue's arrival sequence), and is later than any event
           an earlier wait of this job took (the steps hash's \`ev:<event>\`); else the job joins
           the waiters of its match's hash
  Events   \`step\` (j, g, n the step's name, s its state: sleeping, waiting, invoking, or done when
           it goes on at once) per job, in one entry
  Errors   EMQKIND, EMQARG, before anything is written
  Rings    the doorbell when a job is claimable now or a freed group slot made work claimable;
           the schedule bell when a sleeper is the earliest scheduled job, or when a wait's
           timeout is the earliest due time
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- The fence: the row of job \`id\` if it is active under lease token \`token\` (its \`t\`), else nil
-- and the row's state and \`t\` (false when absent), for each_held's repeat check.
-- Returns {attempts, group or false, max attempts, attempts base, backoff, order score, dedupe key
-- \`dk\` or false, its ttl \`dt\` or false, a flow child's parent \`fp\` or false}, the defaults filled in for an absent \`m\` or \`b\`; an
-- active row always has its order (claim wrote it).
local function hold(id, token)
  local r = redis.call('HMGET', job_key(id), 's', 't', 'a', 'g', 'm', 'z', 'b', 'o', 'dk', 'dt', 'fp')
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  return { tonumber(r[3]), r[4], tonumber(r[5]) or DEFAULT_MAX_ATTEMPTS, tonumber(r[6] or '0'), r[7] or DEFAULT_BACKOFF, r[8], r[9], r[10], r[11] }
end
-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index \`first\`, \`stride\` values
-- each. \`fence(id, token)\` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token (then the row's state
-- and \`t\` after it); \`act(id, held, i)\` settles a held job (\`held\` what fence returned, \`i\` the index
-- of its id, its other values after it) and returns its code. A job not held is left as it was:
-- its code is \`again(token, state, t)\` (nil for a settle without one: 0), the code a repeat of
-- this settle answers when the row shows it already ran under that token (its reply was lost and
-- the request sent again), else 0, fenced off. Returns the codes in ARGV order. The caller runs
-- the ids through check_kind before: the kind door's errors come before any write, and act writes.
local function each_held(first, stride, fence, act, again)
  local codes = {}
  for i = first, #ARGV, stride do
    local id, token = ARGV[i], ARGV[i + 1]
    local held, state, t = fence(id, token)
    if held then
      codes[#codes + 1] = act(id, held, i)
    elseif again then
      codes[#codes + 1] = again(token, state, t)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end
-- The \`t\` a settle leaves in the row it moves out of active: the holder's lease token, '/', then
-- what the settle did, \`what\`: the script's letter and its reply code ('r1' retried for later,
-- 'r2' retried now, 'r3' buried by retry, 'f1' failed, 'g1' given back). A claim writes a bare
-- token and no other script writes a mark, so the mark says that this very settle ran: a repeat
-- of it (its reply lost, the request sent again) answers as it did and writes nothing
-- (includes/repeat_code.lua), where a holder whose lease the reaper took finds its token bare.
local function settled_token(token, what)
  return token .. '/' .. what
end
-- What a settle answers for a job it does not hold, from the row's \`t\`: when \`t\` is the mark this
-- settle leaves (settled_token(token, kind .. code), \`code\` one of \`codes\`), the settle already
-- ran under this token (a repeat of it: its reply was lost and the request sent again), so the code
-- it answered then; else 0, fenced off.
local function repeat_code(token, t, kind, codes)
  for _, code in ipairs(codes) do
    if t == settled_token(token, kind .. code) then return code end
  end
  return 0
end
-- Count \`g\` once in \`tally\`, {order = {groups in first-seen order}, [g] = count}: settling a
-- batch frees each group's slots in one step (free_slots) instead of one per job.
local function tally(t, g)
  if not g or g == '' then return end
  if not t[g] then
    t[g] = 0
    t.order[#t.order + 1] = g
  end
  t[g] = t[g] + 1
end
-- The part of \`batch\` (see admit) for ring entry g, made on first use: {z = {score, id, ...} for
-- the ordered zset, f = {id, ...} for the arrivals list}. \`batch.order\` lists the entries in
-- first-seen order.
local function batch_entry(batch, g)
  if g == nil or g == false or g == '' then g = UNGROUPED end
  local e = batch[g]
  if not e then
    e = { z = {}, f = {} }
    batch[g] = e
    batch.order[#batch.order + 1] = g
  end
  return e
end
-- Collect job \`id\` for admission (see admit) into ring entry g's ordered zset with \`score\`: a job
-- with a priority, or one going back in its place.
local function batch_push(batch, g, score, id)
  local e = batch_entry(batch, g)
  e.z[#e.z + 1] = score
  e.z[#e.z + 1] = id
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- How many of \`keys\` exist, asked with one EXISTS per 1000 keys (Lua's unpack has a limit)
-- instead of one call per key. A list, zset or set with no member does not exist, so for those
-- the count says how many hold something.
local function count_existing(keys)
  local n = 0
  for i = 1, #keys, 1000 do
    n = n + redis.call('EXISTS', unpack(keys, i, math.min(i + 999, #keys)))
  end
  return n
end
-- The entries of \`entries\` (distinct) whose lane holds a claimable job, in their order. When every
-- entry's arrivals list exists (where most jobs wait), one EXISTS over the lists answers for all;
-- otherwise each entry is asked on its own.
local function lanes_nonempty(entries)
  if #entries == 0 then return entries end
  local lists = {}
  for i, g in ipairs(entries) do lists[i] = fifo_key(g) end
  if count_existing(lists) == #entries then return entries end
  local out = {}
  for _, g in ipairs(entries) do
    if lane_nonempty(g) then out[#out + 1] = g end
  end
  return out
end
-- Runs \`command key member...\` over \`list\` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
-- The tail every settle shares: free the group slots counted in \`freed\` (tally), then admit the
-- jobs collected in \`batch\` (batch_push; nil when nothing goes back to a lane). Slots first: a
-- lane that gets its job back and a freed slot goes on the ring once. Returns true when either
-- made work claimable; the caller rings the doorbell, once (beat rings once for its reaping and
-- its promotion together, so this does not ring itself).
local function free_and_admit(freed, batch)
  local woke = free_slots(freed)
  if batch and admit(batch) then woke = true end
  return woke
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- The schedule bell: when one of \`ids\` (a set: id -> true) just became the earliest scheduled job,
-- push a token onto \`sched\` (at most 64) so a parked consumer re-reads the next due time and sets
-- its timer. Nothing is claimable yet, so the doorbell stays quiet.
local function ring_sched_bell(ids)
  local head = redis.call('ZRANGE', K_SCHEDULED, 0, 0)[1]
  if head and ids[head] then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- A job's steps hash (docs/design/steps.md): field \`<index>\` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and \`ev:<event>\` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
-- Where durable waits for events meet the events (docs/design/steps.md, "Waiting for an event").
-- A wait's match is a shape, its paths into the event's data joined by newlines (sorted: '' for
-- none), and the values the data must have there. Waiters of \`event\` whose match hashes to h are
-- in the zset waiters_key(event, h) (score: when they began); the shapes waiters of \`event\` use
-- are in the set shapes_key(event), so a sent event is hashed once per shape, never compared
-- with each waiter. Kept events (a send's \`keepMs\`, for waits that begin after it) are in
-- kept_key(event) (a zset: member the event's sequence number, score when it stops being kept)
-- and kept_data_key(event) (a hash: sequence number -> "<event id> <sent ms> <arrivals> <data JSON>",
-- arrivals the queue's arrival sequence, meta \`seq\`, when it was sent: what orders it against a job
-- created in the same ms).
local function waiters_key(event, hash)
  return PREFIX .. 'on:' .. event .. ':' .. hash
end
local function shapes_key(event)
  return PREFIX .. 'shapes:' .. event
end
local function kept_key(event)
  return PREFIX .. 'kept:' .. event
end
local function kept_data_key(event)
  return PREFIX .. 'keptd:' .. event
end
-- The hash of a match: its shape and its values (a Lua array) encoded by cjson, the same encoder
-- for a waiter's values (decoded from the caller's JSON) and for a sent event's (read from its
-- data), so 1 and 1.0 are one value.
local function match_hash(shape, values)
  return redis.sha1hex(shape .. '\\n' .. cjson.encode(values))
end
-- The values at \`shape\`'s paths in decoded \`data\` (each path its object keys joined by dots):
-- cjson.null where the data has no scalar there, which no waiter's value equals.
local function values_at(data, shape)
  local out = {}
  if shape == '' then return out end
  for path in string.gmatch(shape, '[^\\n]+') do
    local v = data
    for part in string.gmatch(path, '[^.]+') do
      if type(v) == 'table' then v = v[part] else v = nil end
    end
    if v == nil or type(v) == 'table' then v = cjson.null end
    out[#out + 1] = v
  end
  return out
end
-- Collect one event of this script call, to be written by flush_events (emit writes at once):
-- its name \`event\`, the job \`id\` (nil for an event of the queue or a group), then up to four
-- field-value pairs, each left out when its value is nil or false ('' is a value: a lifted limit's
-- \`l\`). The field names are the stream's short ones (docs/design.md, "Events"): g group, a attempt,
-- d due ms, x error, r result, rt result left out, p progress, l limit, n count, s state. A value
-- may be a Lua number: redis.call writes an integer below 2^53 in full.
-- The events of one call are kept in one flat list (\`event_fields\`) with where each one starts
-- (\`event_starts\`), and the pairs are named parameters, not \`...\`: a batch of a thousand events
-- costs appends, not a table an event.
local event_fields, event_starts = {}, {}
-- whether events are off (meta \`ecap\` 0: includes/events_settings.lua), asked once a call: then
-- nothing is collected, which flush_events would drop, and a batch paid each event's appends
local events_off = nil
local function collect_event(event, id, f1, v1, f2, v2, f3, v3, f4, v4)
  if events_off == nil then events_off = queue_meta().ecap == '0' end
  if events_off then return end
  local fields = event_fields
  local n = #fields
  event_starts[#event_starts + 1] = n + 1
  fields[n + 1] = 'e'
  fields[n + 2] = event
  n = n + 2
  if id then
    fields[n + 1] = 'j'
    fields[n + 2] = id
    n = n + 2
  end
  if v1 then
    fields[n + 1] = f1
    fields[n + 2] = v1
    n = n + 2
  end
  if v2 then
    fields[n + 1] = f2
    fields[n + 2] = v2
    n = n + 2
  end
  if v3 then
    fields[n + 1] = f3
    fields[n + 2] = v3
    n = n + 2
  end
  if v4 then
    fields[n + 1] = f4
    fields[n + 2] = v4
  end
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end
-- Write the events collected in this call (collect_event) to the events stream, in the order they
-- were collected, and forget them: one XADD ... MAXLEN ~ <cap> * for up to EVENTS_PER_ENTRY events
-- (and at most EVENT_VALUES_PER_ENTRY values, under Lua's unpack limit), so a batch of a hundred
-- settles costs one command, not a hundred. An entry is a run of events, each starting with its
-- field \`e\`; an entry of one event is the event's fields alone. Nothing is read or written when
-- nothing was collected, and nothing is written when the queue's cap is 0 (events off): the
-- stream is then never created.
local EVENTS_PER_ENTRY, EVENT_VALUES_PER_ENTRY = 500, 7000
local function flush_events()
  local count = #event_starts
  if count == 0 then return end
  local cap = events_settings()
  if cap ~= '0' then
    local first = 1
    while first <= count do
      local from = event_starts[first]
      local last = math.min(first + EVENTS_PER_ENTRY - 1, count)
      -- the values of events first..last end where event last + 1 starts
      local to = (event_starts[last + 1] or #event_fields + 1) - 1
      while last > first and to - from + 1 > EVENT_VALUES_PER_ENTRY do
        last = last - 1
        to = event_starts[last + 1] - 1
      end
      redis.call('XADD', K_EVENTS, 'MAXLEN', '~', cap, '*', unpack(event_fields, from, to))
      first = last + 1
    end
  end
  event_fields, event_starts = {}, {}
end

for i = 2, #ARGV, 9 do
  check_kind(ARGV[i])
  arg_int(ARGV[i + 2], 'step index', 1)
  local how = ARGV[i + 3]
  if how ~= 's' and how ~= 'u' and how ~= 'w' and how ~= 'i' then
    error(redis.error_reply('EMQARG how must be s, u, w or i, got ' .. tostring(how)))
  end
  arg_int(ARGV[i + 5], 'ms', -1)
end

local now = now_ms()
local now_text = string.format('%d', now)
local K_SLEEPING, K_AWAITING = PREFIX .. 'sleeping', PREFIX .. 'awaiting'
local freed, batch, later = { order = {} }, { order = {} }, {}
local sched_bell = false
local outcomes = { 1, 2, 3, 4 }

-- the earliest kept event of \`event\` matching \`hash\` that this job may take: sent after the job
-- was created (\`created\` its ms; in that same ms, when the queue's arrival sequence then had
-- reached the job's own, \`arrival\`: its order's low part) and later than \`after\`: its sequence
-- number, id and data; nil for none
local function kept_match(event, shape, hash, created, arrival, after)
  local live = redis.call('ZRANGEBYSCORE', kept_key(event), now, '+inf')
  if #live == 0 then return nil end
  local seqs = {}
  for _, s in ipairs(live) do
    local n = tonumber(s)
    if n > after then seqs[#seqs + 1] = n end
  end
  table.sort(seqs)
  for _, n in ipairs(seqs) do
    local value = redis.call('HGET', kept_data_key(event), string.format('%d', n))
    if value then
      local sp1 = string.find(value, ' ', 1, true)
      local sp2 = string.find(value, ' ', sp1 + 1, true)
      local sp3 = string.find(value, ' ', sp2 + 1, true)
      local sent = tonumber(string.sub(value, sp1 + 1, sp2 - 1))
      local arrivals = tonumber(string.sub(value, sp2 + 1, sp3 - 1)) % 4294967296
      local data = string.sub(value, sp3 + 1)
      local after_job = sent > created or (sent == created and arrivals >= arrival)
      if after_job and match_hash(shape, values_at(cjson.decode(data), shape)) == hash then
        return n, string.sub(value, 1, sp1 - 1), data
      end
    end
  end
  return nil
end

local codes = each_held(2, 9, hold, function(id, row, i)
  local group, base, order = row[2], row[4], row[6]
  local token, index, how, name, number = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], tonumber(ARGV[i + 5])
  local key = job_key(id)
  mark_feature('st')
  redis.call('ZREM', K_ACTIVE, id)
  tally(freed, group)
  local g = group ~= '' and group or false
  local record = { n = name, st = now }
  local code
  -- the step is over already: the job goes back to its lane, in its place
  local function over()
    record.s, record.ft = 'done', now
    batch_push(batch, group, order, id)
    return 2
  end
  if how == 's' or how == 'u' then
    local due = how == 's' and now + number or math.max(number, now)
    record.k, record.u = 'sleep', due
    if due <= now then
      code = over()
    else
      record.s = 'sleeping'
      redis.call('ZADD', K_SCHEDULED, due, id)
      redis.call('ZADD', K_SLEEPING, due, id)
      later[id] = true
      code = 1
    end
  elseif how == 'w' then
    local event, shape, values = ARGV[i + 6], ARGV[i + 7], ARGV[i + 8]
    local hash = match_hash(shape, cjson.decode(values))
    local deadline = number >= 0 and now + number or nil
    record.k, record.ev, record.u = 'wait', event, deadline
    local steps = step_key(id)
    -- its arrival: the low part of its order, which hold read
    local created, arrival = tonumber(redis.call('HGET', key, 'c')) or 0, (tonumber(order) or 0) % 4294967296
    local after = tonumber(redis.call('HGET', steps, 'ev:' .. event)) or 0
    local seq, event_id, data = kept_match(event, shape, hash, created, arrival, after)
    if seq then
      record.r, record.ei = data, event_id
      redis.call('HSET', steps, 'ev:' .. event, string.format('%d', seq))
      code = over()
    else
      record.s = 'waiting'
      local wk = waiters_key(event, hash)
      redis.call('ZADD', wk, now, id)
      redis.call('SADD', shapes_key(event), shape)
      redis.call('SADD', PREFIX .. 'evnames', event)
      redis.call('ZADD', K_AWAITING, deadline or '+inf', id)
      if deadline and first_score(K_AWAITING) == deadline then sched_bell = true end
      redis.call('HSET', key, 'wk', wk)
      code = 3
    end
  else
    local r = redis.call('HMGET', key, 'fw', 'fd')
    record.k = 'invoke'
    -- the child and its queue, as the step wrote them before enqueueing it
    local old = redis.call('HGET', step_key(id), index)
    if old then
      local o = cjson.decode(old)
      record.cq, record.ci = o.cq, o.ci
    end
    if r[1] and tonumber(r[2] or '0') >= tonumber(r[1]) then
      code = over()
    else
      record.s = 'invoking'
      redis.call('ZADD', K_WAITING, now, id)
      code = 4
    end
  end
  redis.call('HSET', step_key(id), index, cjson.encode(record))
  local state = ({ 'scheduled', 'pending', 'awaiting', 'waiting' })[code]
  local fields = { 's', state, 't', settled_token(token, 's' .. code), 'z', string.format('%d', (base or 0) + 1), 'sn', '1' }
  if code ~= 2 then
    fields[#fields + 1] = 'sw'
    fields[#fields + 1] = string.sub(how, 1, 1) == 'u' and 's' .. index or how .. index
  end
  redis.call('HSET', key, unpack(fields))
  collect_event('step', id, 'g', g, 'n', name, 's', record.s)
  return code
end, function(token, _, t)
  return repeat_code(token, t, 's', outcomes)
end)
if free_and_admit(freed, batch) then ring_doorbell() end
if next(later) then ring_sched_bell(later) end
if sched_bell then
  push_token(K_SCHED)
  publish_bell('sched')
end
flush_events()
return codes
`,
  },
  sweepGroup: {
    name: "sweepGroup",
    sha1: "960fd08c745ef2b42d860bc1f0fb057950954a11",
    lua: `--[[
  sweep-group: the counted sweep. Recount group g's active jobs from the active set itself,
  repair the stored count, and put the lane on (or take it off) the ring to match.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    {stored count before, true count}
  Rings    the doorbell when the lane went back on the ring
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The active zset kept in Redis's skiplist encoding. Redis keeps a zset of at most 128 members
-- (zset-max-listpack-entries) as a listpack, where each ZADD or ZREM of a member walks the whole
-- list: a drain that claims and completes 100 jobs a call into a zset of about 100 spent some
-- 24k of its 137k instructions a job there (callgrind; 6k as a skiplist). A member longer than
-- 64 bytes (zset-max-listpack-value) makes the zset a skiplist and keeps it one, so a claim of
-- ACTIVE_SKIPLIST_BATCH jobs or more adds this member, first in its ZADD (a new zset's encoding
-- follows the first member), scored +inf: no lease ever ends there, so the reads by deadline
-- (reap's expired range) never see it, and the reads of the leases go up to, not including, +inf
-- (first_lease, lease_count, the listings). It is not a job id (ids are "JOB:..."); the keyspace
-- checker allows it and nothing else that is not a leased job (docs/design/keyspace.md).
local ACTIVE_SKIPLIST_MEMBER = '~ keeps this zset a skiplist: a listpack zset walks all its members on each ZADD and ZREM ~'
local ACTIVE_SKIPLIST_BATCH = 32
-- The earliest lease deadline (ms), -1 for none.
local function first_lease()
  return tonumber(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]) or -1
end
-- How many jobs are leased.
local function lease_count()
  return redis.call('ZCOUNT', K_ACTIVE, '-inf', '(+inf')
end
-- The leased jobs from the \`offset\`th soonest deadline on, at most \`limit\` (ids and deadlines,
-- flat, as ZRANGE WITHSCORES answers; ids only without \`scores\`).
local function lease_range(offset, limit, scores)
  if scores then
    return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', offset, limit)
  end
  return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'LIMIT', offset, limit)
end
-- The ordered zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane. With
-- the entry's arrivals list (fifo_key) it holds the entry's claimable jobs: the zset those whose
-- order is not their arrival (a priority, or back in their place after a run), the list the rest.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
-- The arrivals list behind a ring entry: jobs enqueued claimable now at the default priority, in
-- arrival order (a list costs ~13 B a member where the lane zset costs ~110 B). \`emq:{q}:fifo\`
-- for UNGROUPED, else \`emq:{q}:fifo:<g>\` (a group name has no ':', so no two keys collide).
local function fifo_key(g)
  if g == UNGROUPED then return PREFIX .. 'fifo' end
  return PREFIX .. 'fifo:' .. g
end
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- Whether ring entry g may hand out a job now, its lane aside: not throttled (held, or at its rate
-- limit: includes/throttle.lua), and for a group not paused and below its limit.
local function group_open(g)
  if queue_meta().th and redis.call('ZSCORE', K_THROTTLED, g) then return false end
  return group_admits(g)
end
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if queue_meta().paused then return end
  push_token(K_WAKE)
  publish_bell('wake')
end
-- Put ring entry g on the ring, or take it off, to match whether it is serviceable now; \`on_ring\`
-- says whether it is on the ring before (for a group the script has just changed, whether it was
-- serviceable: the ring holds exactly the serviceable entries). Joining rings the doorbell, as
-- the lane's work just became claimable.
local function match_ring(g, on_ring)
  local serviceable = lane_serviceable(g)
  if serviceable and not on_ring then
    redis.call('RPUSH', K_RING, g)
    ring_doorbell()
  elseif on_ring and not serviceable then
    redis.call('LREM', K_RING, 0, g)
  end
end

local g = ARGV[2]
local stored = tonumber(redis.call('HGET', K_GACTIVE, g) or '0')
local counted = 0
for _, id in ipairs(lease_range(0, -1)) do
  if redis.call('HGET', job_key(id), 'g') == g then counted = counted + 1 end
end
if counted > 0 then
  redis.call('HSET', K_GACTIVE, g, counted)
else
  redis.call('HDEL', K_GACTIVE, g)
end
-- the stored count may have been wrong and the ring with it: ask the ring, not the count
match_ring(g, redis.call('LPOS', K_RING, g) ~= false)
return { stored, counted }
`,
  },
  unregisterQueue: {
    name: "unregisterQueue",
    sha1: "fe2a21fa1881aadce897a6a3f627f8f533d00c4d",
    lua: `--[[
  unregister-queue: take a queue's name out of the registry of queues (and its count of
  partitions, if it had them), once obliterate has deleted its keys (of every partition). The
  registry is the one place outside any queue's {q} slot, so this is a script of its own.

  KEYS[1]  emq:queues (set of names)
  KEYS[2]  {emq:queues}:partitions (hash: name -> count of partitions)
  ARGV[1]  the queue's name
  Reply    1 removed now, 0 was not there (a repeat)
]]
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('SREM', KEYS[1], ARGV[1])
`,
  },
  updateData: {
    name: "updateData",
    sha1: "ff7dd372360baaf326505ad3e1ba9e765efc2681",
    lua: `--[[
  update-data: replace the payload of a job not running or finished (pending or scheduled): the
  run that claims it next gets the new payload. Nothing else of the row changes. The same payload
  again writes the same.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  ARGV[3]  payload (JSON text, within the cap: checked by the core before any Redis call)
  Derives  emq:{q}:job:<id>
  Reply    1 replaced, 0 no such job, -1 the job is active, completed or dead
  Errors   EMQKIND, before anything is written
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end

local id = ARGV[2]
check_kind(id)
local key = job_key(id)
local state = redis.call('HGET', key, 's')
if not state then return 0 end
if state ~= 'pending' and state ~= 'scheduled' then return -1 end
redis.call('HSET', key, 'd', ARGV[3])
return 1
`,
  },
  upsertScheduler: {
    name: "upsertScheduler",
    sha1: "146af48d0d7672cefbb76079c707f2e48f1f3f9e",
    lua: `--[[
  upsert-scheduler: create scheduler \`id\`, or replace its spec and job in place, keeping what it
  has fired (\`f\`, \`l\`), fenced on the revision its caller read (get-scheduler.lua), so an upsert
  computed from a row that changed meanwhile (another upsert, a firing) writes nothing and is
  worked out again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  scheduler id (a name: checked by the caller)
  ARGV[3]  the revision the caller read (-1: the scheduler must not exist)
  ARGV[4]  the spec, JSON text (the caller's: the scripts read only ARGV[6])
  ARGV[5]  anchor ms of an \`every\` spec (-1: none)
  ARGV[6]  limit: the most slots it fires in all (-1: no limit)
  ARGV[7]  next slot ms (-1: it fires no more); a limit already reached fires no more either
  then the job it fires, as enqueue takes one: payload (JSON text), group ("" = ungrouped),
           priority, maxAttempts, backoff spec
  Derives  emq:{q}:scheduler:<id>
  Row      k spec, an anchor, m limit, d payload, g group, p priority, ma maxAttempts, b backoff,
           v revision (every upsert and firing adds 1), n next slot (absent: fires no more),
           l last slot fired, f slots fired, c created, u updated (server ms)
  Reply    {1, revision written, next slot or -1} or {0, the revision found (-1: none)}
  Meta     sets \`sc\` (the queue has schedulers: includes/queue_meta.lua) before its first entry
  Errors   EMQARG (a malformed number)
  Rings    the schedule bell when its next slot is now the queue's next due time
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- ARGV value v as an integer of at least \`min\`, else an EMQARG error naming \`what\`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The row of scheduler \`id\`: emq:{q}:scheduler:<id> (a hash, docs/design.md "Schedulers").
local function scheduler_key(id)
  return PREFIX .. 'scheduler:' .. id
end
-- Push a token \`1\` onto bell list \`key\`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
-- The lowest score in zset \`key\` (the next due time in scheduled, the earliest lease deadline in
-- active), or -1 when the zset is empty.
local function first_score(key)
  return tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) or -1
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- The earliest next slot of any scheduler (ms), or -1 when none will fire: a scheduler that fires
-- no more waits in \`schedulers\` with the score +inf, which Redis answers as "inf". A queue that
-- never made a scheduler (meta \`sc\` unset) has none: nothing is read.
local function first_slot()
  if not queue_meta().sc then return -1 end
  local score = redis.call('ZRANGE', K_SCHEDULERS, 0, 0, 'WITHSCORES')[2]
  if score == nil or score == 'inf' then return -1 end
  return tonumber(score)
end
-- The next time something falls due (-1 for none): the first scheduled job's due time, the
-- earliest scheduler slot, or the earliest time a throttled entry may start again, whichever is
-- soonest. A parked consumer's timer runs a beat then. The throttled entries are read only once
-- any was (meta \`th\`), the waits' timeouts once a step was (meta \`st\`).
-- The earliest timeout of a wait for an event (a wait without one scores +inf): -1 for none.
local function first_timeout()
  local at = tonumber(redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  return at or -1
end
local function next_due()
  local soonest = -1
  for _, at in ipairs({ first_score(K_SCHEDULED), first_slot(), queue_meta().th and first_score(K_THROTTLED) or -1,
    queue_meta().st and first_timeout() or -1 }) do
    if at >= 0 and (soonest < 0 or at < soonest) then soonest = at end
  end
  return soonest
end
-- A partition's bells also go out by sharded pub/sub: SPUBLISH \`kind\` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (\`q~i\`: no other queue's name holds a \`~\`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
-- The schedule bell for a time \`at\` (ms) that was just written (a scheduler's next slot): when it
-- is now the next due time of the queue, push a token onto \`sched\` so a parked consumer re-reads
-- the next due time and sets its timer (a slot already due runs a beat at once).
local function ring_sched_bell_at(at)
  if at >= 0 and next_due() == at then
    push_token(K_SCHED)
    publish_bell('sched')
  end
end

local id = ARGV[2]
local expected = arg_int(ARGV[3], 'revision', -1)
local anchor = arg_int(ARGV[5], 'anchor', -1)
local limit = arg_int(ARGV[6], 'limit', -1)
local next_slot = arg_int(ARGV[7], 'next slot', -1)
local priority = arg_int(ARGV[10], 'priority', 0)
arg_int(ARGV[11], 'maxAttempts', 1)

local key = scheduler_key(id)
local found = redis.call('HMGET', key, 'v', 'f')
local revision = tonumber(found[1] or '-1')
if revision ~= expected then return { 0, revision } end
local fired = tonumber(found[2] or '0')
if limit >= 0 and fired >= limit then next_slot = -1 end

local now = string.format('%d', now_ms())
revision = revision + 1
redis.call('HSET', key, 'k', ARGV[4], 'd', ARGV[8], 'p', string.format('%d', priority), 'ma', ARGV[11], 'b', ARGV[12],
  'v', string.format('%d', revision), 'f', string.format('%d', fired), 'u', now)
if expected < 0 then redis.call('HSET', key, 'c', now) end
local cleared = {}
if ARGV[9] ~= '' then redis.call('HSET', key, 'g', ARGV[9]) else cleared[#cleared + 1] = 'g' end
if anchor >= 0 then redis.call('HSET', key, 'an', string.format('%d', anchor)) else cleared[#cleared + 1] = 'an' end
if limit >= 0 then redis.call('HSET', key, 'm', string.format('%d', limit)) else cleared[#cleared + 1] = 'm' end
mark_feature('sc')
if next_slot >= 0 then
  redis.call('HSET', key, 'n', string.format('%d', next_slot))
  redis.call('ZADD', K_SCHEDULERS, next_slot, id)
else
  cleared[#cleared + 1] = 'n'
  redis.call('ZADD', K_SCHEDULERS, '+inf', id)
end
if #cleared > 0 then redis.call('HDEL', key, unpack(cleared)) end
ring_sched_bell_at(next_slot)
return { 1, revision, next_slot }
`,
  },
  watchJob: {
    name: "watchJob",
    sha1: "48fa7a95444c9333b0397e855d6aff127f6498dd",
    lua: `--[[
  watch-job: where a waiter starts: the events stream's last entry id, whether events are on, and
  (given an id) that job's row, read in one call so nothing can happen between them. A waiter
  that finds the row unfinished waits for the job's events after that id, and so misses none; one
  that finds it finished has its outcome from the row (Queue.waitFor, docs/design.md "Events").

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id, or '' for none (only the stream's position: addAndWait, before it adds)
  Derives  emq:{q}:job:<id>
  Reply    {last, cap, row}: last the stream's last entry id ('0' when it is empty or absent),
           cap the events cap as text ('0': events off), row as get-job answers it ({} when
           there is no such job, or no id was given)
  Errors   EMQKIND
]]
-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta \`rate\`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
-- The row of job \`id\` (a "JOB:" id).
local function job_key(id)
  return PREFIX .. 'job:' .. id
end
-- The row's defaults, which must equal DEFAULT_JOB_DEFAULTS in src/encode.ts
-- (test/transport/row-format.test.ts pins it): a row without \`m\` allows DEFAULT_MAX_ATTEMPTS attempts per
-- run, a row without \`b\` backs off by DEFAULT_BACKOFF. enqueue writes neither field when the job
-- asks for exactly these, so a job on the built-in defaults keeps a small row. They are constants
-- of the scripts, never a setting stored in Redis: changing a stored default would silently
-- change every row that relies on it.
local DEFAULT_MAX_ATTEMPTS = 3
local DEFAULT_BACKOFF = 'e,1000,3600000,0.2'
-- A row as HGETALL returned it (a flat field/value list), with the defaults written out for the
-- fields enqueue leaves out (\`m\`, \`b\`), so a reader of get-job or list-dead sees every field.
local function with_defaults(row)
  local has = {}
  for i = 1, #row, 2 do has[row[i]] = true end
  if not has['m'] then
    row[#row + 1] = 'm'
    row[#row + 1] = tostring(DEFAULT_MAX_ATTEMPTS)
  end
  if not has['b'] then
    row[#row + 1] = 'b'
    row[#row + 1] = DEFAULT_BACKOFF
  end
  return row
end
-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: \`paused\` (true or false), \`ecap\` and \`erb\` (the events
-- settings as stored, false when unset: includes/events_settings.lua), \`rate\` (the queue's rate
-- limit "limit:periodMs", false for none), \`grates\` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: \`dd\` (true once any job took a dedupe key),
-- \`fl\` (true once any job of a flow was written here), \`sc\` (true once any scheduler was made) and
-- \`th\` (true once any entry was throttled: held, or at a rate limit), \`st\` (true once any job
-- recorded a durable step: claims read a row's \`sn\` and \`sw\`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), \`tm\` (true once any job had a timeout of its own: claims read
-- its \`to\`), and \`ng\` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for \`dk\`, \`dt\`, \`fp\` and
-- \`fw\` only under \`dd\` and \`fl\` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under \`fl\`, the schedulers only under \`sc\` (first_slot, due_schedulers) and the
-- throttled entries only under \`th\` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag \`name\` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
-- The queue's events settings, read with the call's other settings (includes/queue_meta.lua):
-- meta \`ecap\`, the stream's MAXLEN as text (absent: DEFAULT_EVENTS_CAP; '0': events off, nothing
-- is written and the stream never exists), and meta \`erb\`, the most bytes of a result a
-- \`completed\` event carries (absent: DEFAULT_EVENT_RESULT_BYTES).
-- set-events writes both; these defaults equal DEFAULT_EVENTS_SETTINGS in src/events/events.ts.
local DEFAULT_EVENTS_CAP, DEFAULT_EVENT_RESULT_BYTES = '10000', 1024
local function events_settings()
  local meta = queue_meta()
  return meta.ecap or DEFAULT_EVENTS_CAP, tonumber(meta.erb) or DEFAULT_EVENT_RESULT_BYTES
end

local id = ARGV[2]
local row = {}
if id ~= '' then
  check_kind(id)
  row = redis.call('HGETALL', job_key(id))
  if #row > 0 then with_defaults(row) end
end
local last = redis.call('XREVRANGE', K_EVENTS, '+', '-', 'COUNT', 1)
local cap = events_settings()
return { last[1] and last[1][1] or '0', cap, row }
`,
  },
} satisfies Record<string, ScriptSource>;

/** The name of a script in lua/, in camelCase. */
export type ScriptName = keyof typeof scripts;
