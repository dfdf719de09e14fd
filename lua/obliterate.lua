--[[
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
-- @include keyspace
-- @include arg_int
-- @include job_key
-- @include active_skiplist
-- @include chunked
-- @include delete_rows
-- @include tally
-- @include free_slots
-- @include drop_lane
-- @include scheduler_key
-- @include starts_key

local force = ARGV[2] == '1'
local n = arg_int(ARGV[3], 'n', 1)
if not force then
  local active = lease_count()
  if active > 0 then return { -1, active } end
end
redis.call('HSET', K_META, 'paused', '1')

local budget, deleted = n, 0
-- counts `rows` deleted and `visits` (a group visited) against the budget; true when it is spent
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
-- the waits of the concurrency keys (docs/design/job-controls.md) hold pending rows too
local indexes = { K_SCHEDULED, K_DEAD, K_COMPLETED, K_WAITING, PREFIX .. 'awaiting', PREFIX .. 'cancelled' }
for _, k in ipairs(redis.call('SMEMBERS', PREFIX .. 'keys')) do indexes[#indexes + 1] = PREFIX .. 'kwait:' .. k end
for _, index in ipairs(indexes) do
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
-- and the concurrency keys' (their rate limits and starts logs: includes/key_rate.lua)
for _, k in ipairs(redis.call('HKEYS', PREFIX .. 'krate')) do redis.call('DEL', starts_key(KEY_MARK .. k)) end
redis.call('DEL', K_THROTTLED, K_GRATE, K_HOLDS, starts_key(QUEUE_ENTRY))
-- flow news not yet relayed goes back with the reply, for the caller to relay, with this call's
local left = redis.call('ZRANGE', K_OUTBOX, 0, -1)
for _, e in ipairs(left) do outbox_written[#outbox_written + 1] = e end
redis.call('DEL', K_OUTBOX, K_WAITING)
-- durable steps' keys not held by a row (docs/design/steps.md): the events' names are in `evnames`
for _, name in ipairs(redis.call('SMEMBERS', PREFIX .. 'evnames')) do
  redis.call('DEL', PREFIX .. 'shapes:' .. name, PREFIX .. 'kept:' .. name, PREFIX .. 'keptd:' .. name)
end
redis.call('DEL', PREFIX .. 'evnames', PREFIX .. 'sleeping', PREFIX .. 'awaiting', PREFIX .. 'expiring', PREFIX .. 'keys', PREFIX .. 'klimit', PREFIX .. 'kactive', PREFIX .. 'krate')
redis.call('DEL', K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE,
  K_GROUPS, K_SCHED, K_COMPLETED, K_EVENTS, K_SCHEDULERS, PREFIX .. 'fifo', K_MINUTES)
return { 1, deleted, outbox_written }
