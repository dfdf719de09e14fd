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
  ARGV[7]  the jobs' form: "p" (plain) gives each job as 2 values, its payload (JSON text) and
           group ("" = ungrouped); "l" (linked) as 5, its id, payload, group, parent and children
           (a flow's jobs); every other field the default below; "f" (full) as all 16 below
           (a call of plain jobs, the usual bulk add, sends 2 arguments a job instead of 13: each
           argument is parsed, made a Lua string and freed by Redis, and written by the client)
  then, "f", 16 values per job:
           id ("" = a fresh "JOB:<seq>", in a partition "JOB:<seq>~<i>"), payload (JSON text), group ("" = ungrouped),
           delayMs (-1 = none), runAt (epoch ms, -1 = none), priority (lower runs first),
           maxAttempts (>= 1), backoff spec ("<f|e>,<delayMs>,<capMs>,<jitter>"),
           dedupe key ("" = none; 1 to 1024 bytes, never with an id), dedupe ttlMs (-1 = until
           the job finishes, else >= 1), replace ("1": debounce, "0"), parent (a flow child's
           "<queue>|<id>|<policy f|i|r|w>", "" none), children (a flow parent's "<queue>|<id>"
           joined by ",", "" none), timeoutMs (-1 = the consumer's; else >= 1: the job's own,
           the row's `to`, handed out with each claim), expiry ("" none; "a<ms>" that many ms
           after this call, "t<epoch ms>" at that time, by the server's clock: a job not started
           by then never starts, it goes to dead with EMQEXPIRED, docs/design/job-controls.md; the
           row's `xa`, indexed in emq:{q}:expiring), concurrency keys ("" none; their names
           joined by ",": the job starts only while each is under its limit, the row's `ck`,
           docs/design/job-controls.md; each key is added to emq:{q}:keys)
  Derives  emq:{q}:job:<id> (the row), emq:{q}:lane:<group>, emq:{q}:fifo[:<group>],
           emq:{q}:req:<request key> (the first answer, with a sha1 of the jobs for a caller's key;
           a core key's answer of generated ids only as "#<first seq>,<n>,<states>"),
           emq:{q}:dd:<dedupe key> (the id of the job holding it; PX its ttlMs in ttl mode),
           emq:{q}:minutes (a flow parent whose child already failed dies: includes/bury.lua)
  Row      `m` and `b` only when they differ from the scripts' defaults (includes/job_defaults.lua);
           the order `o` on a scheduled row and on a job in an arrivals list; a job with a
           priority waits in its lane's zset with its order as its score (claim writes it into
           the row); `x` (the traceparent) only when ARGV[5] gives one; `dk` the dedupe key and
           `dt` its ttlMs (ttl mode) when the job took one
  Dedupe   a job whose dedupe key names a job (docs/design.md, "Deduplication") writes nothing and
           answers "duplicate" with that job's id; with replace, a job of the key not yet started
           takes its payload and due time instead (includes/replace_job.lua) and it answers
           "replaced". A key taken by an earlier job of the same call is seen as a later call
           would see it: the jobs collected so far are placed first. meta `dd` = 1 once any job
           took a key (written before its row), so the claims, the settles and the bulk deletes
           read `dk` only where it may be
  Flows    a job with children is a flow parent (includes/add_parent.lua): state `waiting`, in
           emq:{q}:waiting, its children in emq:{q}:kids:<id>; a job with a parent keeps it as `fp`.
           meta `fl` = 1 once any job of a flow was written here, before its row: the claims,
           settles and bulk deletes read the links only then (docs/design.md, "Flows")
  Ids      a generated id is "JOB:<seq>": a batch of generated ids alone is known new without an
           EXISTS while meta `ng` holds (includes/take_seq.lua); a caller's id "JOB:<n>" with n
           past the sequence takes `ng` away, before its row is written
  Reply    flat {id, state, id, state, ...} with state "pending" | "scheduled" | "duplicate" |
           "replaced", and for a flow parent "waiting" (or "pending" or "dead" when its children
           had all finished, or one had failed it, before it was written); a duplicate writes nothing; a known request key answers its first reply again
  Events   `added` (j, g) or `scheduled` (j, g, d: its due time) per new job (`waiting` (j, g, n: its
           children) for a flow parent, and `released` or `dead` after it when due), `replaced` (j, g, and
           d when scheduled) per job replaced, in ARGV order, in one entry; a duplicate or a
           request answered again appends nothing
  Errors   EMQKIND (a given id is not "JOB:..."), EMQARG (a malformed number, traceparent or dedupe
           key, a dedupe key with an id, a malformed flow parent or child, a flow parent without an
           id or with a due time), EMQCONFLICT (a caller's request key seen with other
           jobs); all raised before anything is written
  Rings    the doorbell once when any new or replaced job is claimable now; the schedule bell when a
           new or replaced job is the earliest scheduled one
]]
-- @include keyspace
-- @include check_kind
-- @include job_defaults
-- @include arg_int
-- @include now_ms
-- @include job_key
-- @include all_new
-- @include fresh_id
-- @include take_seq
-- @include chunked
-- @include add_job
-- @include admit
-- @include ring_doorbell
-- @include ring_sched_bell
-- @include check_traceparent
-- @include flush_events
-- @include dedupe_key
-- @include replace_job
-- @include add_parent

local request_key, caller_key = ARGV[2], ARGV[4] == '1'
local traceparent = check_traceparent(ARGV[5])
local n = arg_int(ARGV[6], 'n', 1)
local FIELDS = 16
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
    J[b + 8], J[b + 9], J[b + 10], J[b + 11], J[b + 12], J[b + 13], J[b + 14], J[b + 15], J[b + 16] = DEFAULT_BACKOFF, '', '-1', '0', parent, children, '-1', '', ''
  end
elseif form ~= 'f' then
  error(redis.error_reply('EMQARG the jobs\' form is "p", "l" or "f", got ' .. tostring(form)))
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
  if J[b + 15] ~= '' then
    local how = string.sub(J[b + 15], 1, 1)
    if how == 'a' then arg_int(string.sub(J[b + 15], 2), 'expireAfterMs', 1)
    elseif how == 't' then arg_int(string.sub(J[b + 15], 2), 'expireAt', 0)
    else error(redis.error_reply('EMQARG an expiry is "a<ms>" or "t<epoch ms>", got ' .. J[b + 15])) end
  end
  if J[b + 16] ~= '' and not string.match(J[b + 16], '^[%w._:,%-]+$') then
    error(redis.error_reply('EMQARG concurrency keys are names joined by ",", got ' .. J[b + 16]))
  end
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
  if parent ~= '' and not string.match(parent, '^[%w%._%-]+|JOB:[^|,]+|[firw]$') then
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
  local sep = string.find(seen, '\n', 1, true)
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
    fingerprint = redis.sha1hex(table.concat(J, '\n', FIRST - 1))
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
-- id can hold one (meta `ng`; in a partition no caller's id has the `~` a generated one has);
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
    local seen = redis.call('SET', request.key, '\n' .. record, 'NX', 'PX', request.ttl, 'GET')
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
-- whether any job of this call is part of a flow (meta `fl`: the claims, settles and bulk deletes then read links)
local flows = false
-- whether any job of this call has a timeout of its own (meta `tm`), an expiry (meta `xp`)
local timed, expiring, keyed = false, false, false

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
    -- the job's own timeout (meta `tm` first: the claims read `to` only under it)
    if J[b + 14] ~= '-1' then
      if not timed then redis.call('HSET', K_META, 'tm', '1') end
      timed = true
      redis.call('HSET', key, 'to', J[b + 14])
    end
    -- its expiry (meta `xp` first: the claims and beats sweep emq:{q}:expiring only under it)
    if J[b + 15] ~= '' then
      if not expiring then redis.call('HSET', K_META, 'xp', '1') end
      expiring = true
      local at = tonumber(string.sub(J[b + 15], 2))
      if string.sub(J[b + 15], 1, 1) == 'a' then at = now + at end
      local at_text = string.format('%d', at)
      redis.call('HSET', key, 'xa', at_text)
      redis.call('ZADD', PREFIX .. 'expiring', at_text, id)
    end
    -- its concurrency keys (meta `ks` first: the claims and settles read `ck` only under it)
    if J[b + 16] ~= '' then
      if not keyed then redis.call('HSET', K_META, 'ks', '1') end
      keyed = true
      redis.call('HSET', key, 'ck', J[b + 16])
      for k in string.gmatch(J[b + 16], '[^,]+') do redis.call('SADD', PREFIX .. 'keys', k) end
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
if request and wrote then redis.call('SET', request.key, fingerprint .. '\n' .. cjson.encode(reply), 'PX', request.ttl) end
flush_events()
return reply
