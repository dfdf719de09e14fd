--[[
  suspend: leased jobs whose handlers reached a durable sleep, a wait for an event or an invoke
  (docs/design/steps.md) leave active, each fenced on (id, token), holding no slot and no lease,
  with their steps kept: a sleep to scheduled until its due time (server clock), a wait to
  awaiting until a matching event or its timeout, an invoke to waiting (a flow parent) until its
  child finishes. The claim that suspended is not counted as an attempt (the row's `z` + 1).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] tuples of 9: id, token, the step's index, how (`s` sleep for ms, `u` sleep until an
           epoch ms, `w` wait for an event, `i` wait for the invoked child), the step's name,
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
           first's code and writes nothing, by the mark it leaves after the token (`/s<code>`)
  A wait   takes the earliest kept event of its name that matches, was sent after the job was
           created (within one ms, by the queue's arrival sequence), and is later than any event
           an earlier wait of this job took (the steps hash's `ev:<event>`); else the job joins
           the waiters of its match's hash
  Events   `step` (j, g, n the step's name, s its state: sleeping, waiting, invoking, or done when
           it goes on at once) per job, in one entry
  Errors   EMQKIND, EMQARG, before anything is written
  Rings    the doorbell when a job is claimable now or a freed group slot made work claimable;
           the schedule bell when a sleeper is the earliest scheduled job, or when a wait's
           timeout is the earliest due time
]]
-- @include keyspace
-- @include check_kind
-- @include arg_int
-- @include now_ms
-- @include job_key
-- @include hold
-- @include each_held
-- @include settle_cancelled
-- @include settled_token
-- @include repeat_code
-- @include tally
-- @include batch_push
-- @include free_and_admit
-- @include ring_doorbell
-- @include ring_sched_bell
-- @include push_token
-- @include publish_bell
-- @include first_score
-- @include step_key
-- @include event_match
-- @include queue_meta
-- @include collect_event
-- @include flush_events

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

-- the earliest kept event of `event` matching `hash` that this job may take: sent after the job
-- was created (`created` its ms; in that same ms, when the queue's arrival sequence then had
-- reached the job's own, `arrival`: its order's low part) and later than `after`: its sequence
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
end, settle_cancelled)
if free_and_admit(freed, batch) then ring_doorbell() end
if next(later) then ring_sched_bell(later) end
if sched_bell then
  push_token(K_SCHED)
  publish_bell('sched')
end
flush_events()
return codes
