--[[
  fire-schedulers: fire due scheduler slots, each fenced on the revision and slot its caller read
  (from a beat's reply: includes/due_schedulers.lua), so a second runtime firing the same slot
  writes nothing. A slot fired enqueues its scheduler's job with the id `JOB:<scheduler>@<slot>`
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
  Events   `added` (j, g, k the scheduler, d the slot) per job fired, in one entry
  Counts   meta `fired` += the slots fired
  Errors   EMQARG (a malformed number), raised before any write
  Rings    the doorbell when a job fired is claimable. Not the schedule bell: every consumer
           parked meanwhile armed its timer for the slot fired (it was the next due time when it
           parked, or the upsert that made it rang the bell), and that timer's beat reads the
           next slot; ringing would wake one of them for a beat that learns nothing new
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include job_key
-- @include scheduler_key
-- @include add_job
-- @include take_seq
-- @include admit
-- @include ring_doorbell
-- @include next_due
-- @include flush_events

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
  local r = redis.call('HMGET', key, 'v', 'n', 'f', 'm', 'd', 'g', 'p', 'ma', 'b', 'xe')
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
      -- its expiry, that long after its firing (meta `xp` first: the claims sweep only under it)
      if r[10] then
        mark_feature('xp')
        local at = string.format('%d', now + tonumber(r[10]))
        redis.call('HSET', row, 'xa', at)
        redis.call('ZADD', PREFIX .. 'expiring', at, job)
      end
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
