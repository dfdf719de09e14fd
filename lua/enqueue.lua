--[[
  enqueue: add jobs, ungrouped or into a group's lane, claimable now or due later; idempotent by id.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  request key ("" = none): the same key again answers what this call answered and writes
           nothing, so a request that runs twice (a lost reply, a client's retry) is one enqueue
  ARGV[3]  how long the request key is remembered, ms (>= 1 with a key)
  ARGV[4]  "1": the key is a caller's (Idempotency-Key), so a repeat must carry the same jobs;
           "0": a key the core made for this one call
  ARGV[5]  the W3C traceparent of the enqueue's span ("" = none), written to each new row's `x`
           (docs/design.md, "The row"); not part of a caller's key's fingerprint, so a retry
           under another span is the same request
  ARGV[6]  n, the number of jobs (>= 1)
  then 8 values per job:
           id ("" = a fresh "JOB:<seq>"), payload (JSON text), group ("" = ungrouped),
           delayMs (-1 = none), runAt (epoch ms, -1 = none), priority (lower runs first),
           maxAttempts (>= 1), backoff spec ("<f|e>,<delayMs>,<capMs>,<jitter>")
  Derives  emq:{q}:job:<id> (the row), emq:{q}:lane:<group>, emq:{q}:fifo[:<group>],
           emq:{q}:req:<request key> (the first answer, with a sha1 of the jobs for a caller's key)
  Row      `m` and `b` only when they differ from the scripts' defaults (includes/job_defaults.lua);
           the order `o` on a scheduled row and on a job in an arrivals list; a job with a
           priority waits in its lane's zset with its order as its score (claim writes it into
           the row); `x` (the traceparent) only when ARGV[5] gives one
  Reply    flat {id, state, id, state, ...} with state "pending" | "scheduled" | "duplicate";
           a duplicate id writes nothing; a known request key answers its first reply again
  Events   `added` (j, g) or `scheduled` (j, g, d: its due time) per new job, in ARGV order, in one
           entry; a duplicate or a request answered again appends nothing
  Errors   EMQKIND (a given id is not "JOB:..."), EMQARG (a malformed number or traceparent), EMQCONFLICT (a
           caller's request key seen with other jobs); all raised before anything is written
  Rings    the doorbell once when any new job is claimable now; the schedule bell when a new job
           is the earliest scheduled one
]]
-- @include keyspace
-- @include check_kind
-- @include arg_int
-- @include now_ms
-- @include job_key
-- @include all_new
-- @include chunked
-- @include add_job
-- @include admit
-- @include ring_doorbell
-- @include ring_sched_bell
-- @include check_traceparent
-- @include flush_events

local request_key, caller_key = ARGV[2], ARGV[4] == '1'
local traceparent = check_traceparent(ARGV[5])
local n = arg_int(ARGV[6], 'n', 1)
local FIELDS = 8
local FIRST = 6
for i = 0, n - 1 do
  local b = FIRST + i * FIELDS
  if ARGV[b + 1] ~= '' then check_kind(ARGV[b + 1]) end
  arg_int(ARGV[b + 4], 'delayMs', -1)
  arg_int(ARGV[b + 5], 'runAt', -1)
  arg_int(ARGV[b + 6], 'priority', 0)
  arg_int(ARGV[b + 7], 'maxAttempts', 1)
end

-- a request seen before answers as it did the first time: its reply was lost, or a client retried
local request, fingerprint = nil, ''
local function first_reply(seen)
  local sep = string.find(seen, '\n', 1, true)
  if string.sub(seen, 1, sep - 1) ~= fingerprint then
    return redis.error_reply('EMQCONFLICT the idempotency key ' .. request_key .. ' was used with other jobs')
  end
  return cjson.decode(string.sub(seen, sep + 1))
end
if request_key ~= '' then
  local ttl = arg_int(ARGV[3], 'requestTtlMs', 1)
  request = { key = PREFIX .. 'req:' .. request_key, ttl = string.format('%d', ttl) }
  -- a caller's key may come back with other jobs, and its repeat must write nothing at all: it is
  -- looked up first. A key of the core's own is random per call: see below
  if caller_key then
    fingerprint = redis.sha1hex(table.concat(ARGV, '\n', FIRST))
    local seen = redis.call('GET', request.key)
    if seen then return first_reply(seen) end
  end
end

-- a job's due time (-1: claimable now) from its delay or run-at time
local function due_of(b, now)
  local delay, run_at = tonumber(ARGV[b + 4]), tonumber(ARGV[b + 5])
  if delay > 0 then return now + delay end
  if run_at >= 0 then return run_at end
  return -1
end

local now = now_ms()
-- as text once: a Lua number passed to Redis is formatted on every call
local now_text = string.format('%d', now)
local seq = redis.call('HINCRBY', K_META, 'seq', n) - n
-- the common case, every id new (a generated one is "JOB:" and its job's sequence number), is
-- known with one EXISTS for the batch; otherwise each id is checked as it comes
local wanted = {}
for i = 0, n - 1 do
  local id = ARGV[FIRST + i * FIELDS + 1]
  if id == '' then id = 'JOB:' .. string.format('%d', seq + i + 1) end
  wanted[i + 1] = id
end
local all_ids_new, new_keys = all_new(wanted)

-- a key of the core's own: when every id is new (the usual case) the reply is known before any
-- row is written, so one SET NX GET both records it and finds a repeat (whose generated ids are
-- new too: the first run took their numbers). A repeat costs only sequence numbers
if request and not caller_key then
  if all_ids_new then
    local first = {}
    for i = 0, n - 1 do
      first[#first + 1] = wanted[i + 1]
      first[#first + 1] = due_of(FIRST + i * FIELDS, now) > now and 'scheduled' or 'pending'
    end
    local seen = redis.call('SET', request.key, '\n' .. cjson.encode(first), 'NX', 'PX', request.ttl, 'GET')
    if seen then return first_reply(seen) end
    request = nil
  else
    local seen = redis.call('GET', request.key)
    if seen then return first_reply(seen) end
  end
end
local batch = { order = {} }
local reply = {}
local later = { scores = {}, ids = {} }
local wrote = false

for i = 0, n - 1 do
  local b = FIRST + i * FIELDS
  local id, payload, group = ARGV[b + 1], ARGV[b + 2], ARGV[b + 3]
  local priority, max_attempts, backoff = tonumber(ARGV[b + 6]), ARGV[b + 7], ARGV[b + 8]
  seq = seq + 1
  if all_ids_new then
    id = wanted[i + 1]
  elseif id == '' then
    id = 'JOB:' .. string.format('%d', seq)
    while redis.call('EXISTS', job_key(id)) == 1 do
      id = 'JOB:' .. string.format('%d', redis.call('HINCRBY', K_META, 'seq', 1))
    end
  elseif redis.call('EXISTS', job_key(id)) == 1 then
    reply[#reply + 1] = id
    reply[#reply + 1] = 'duplicate'
    id = nil
  end
  if id then
    local key = all_ids_new and new_keys[i + 1] or job_key(id)
    local state = add_job(batch, later, key, id, payload, group, priority, max_attempts, backoff, seq, due_of(b, now), now, now_text, traceparent)
    reply[#reply + 1] = id
    reply[#reply + 1] = state
    wrote = true
  end
end

chunked('ZADD', K_SCHEDULED, later.scores)
if #later.scores > 0 then ring_sched_bell(later.ids) end
if admit(batch) then ring_doorbell() end
-- remembered only when it wrote: a request of duplicates alone answers the same when repeated,
-- and writes nothing (invariant 3)
if request and wrote then redis.call('SET', request.key, fingerprint .. '\n' .. cjson.encode(reply), 'PX', request.ttl) end
flush_events()
return reply
