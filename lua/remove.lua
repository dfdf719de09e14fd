--[[
  remove: delete a job in any state. An active job's group slot is freed and its holder is fenced
  off from then on; a lane left empty leaves the ring.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  ARGV[3]  "" (a caller's removal), or "<queue>|<parent id>": the removal of a removed flow
           parent's child, done only while the row's `fp` names that parent (an id enqueued again
           since is another job), and told to no parent
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:kids:<id>
  Flows    an unfinished flow child tells its parent it is gone (the parent stops waiting for
           it); a flow parent has its unfinished children removed in turn and its children hash
           deleted (includes/forget_flow.lua), through the outbox
  Reply    {1 removed or 0 no such job, {outbox entries written, for the caller to relay}}
  Events   `removed` (j, g) when it removed one
  Dedupe   the job's dedupe key (`dk`, either mode) is released while it still names the job
  Errors   EMQKIND
  Rings    the doorbell when the freed slot made work claimable
]]
-- @include keyspace
-- @include check_kind
-- @include job_key
-- @include free_slot
-- @include ring_doorbell
-- @include emit
-- @include release_dedupe
-- @include forget_flow
-- @include now_ms
-- @include forget_steps
-- @include key_slots
-- @include leave_lane
-- @include admit_credited
-- @include admit

local id = ARGV[2]
check_kind(id)
local key = job_key(id)
local r = redis.call('HMGET', key, 's', 'g', 'dk', 'fp', 'fw', 't', 'sn', 'wk', 'cx', 'ck')
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
  leave_lane(id, group or UNGROUPED, r[10] or nil)
  if admit_credited() then ring_doorbell() end
elseif state == 'active' then
  redis.call('ZREM', K_ACTIVE, id)
  -- its concurrency keys' slots go back, and the jobs parked on them to their lanes
  if r[10] then
    key_slots().leave(r[10])
    if admit(keys_free(nil)) then ring_doorbell() end
  end
  -- a running job whose cancel was asked leaves meta `cx`'s count (lua/cancel.lua)
  if r[9] and redis.call('HINCRBY', K_META, 'cx', -1) <= 0 then redis.call('HDEL', K_META, 'cx') end
  if free_slot(group, 1) then ring_doorbell() end
elseif state == 'scheduled' then
  redis.call('ZREM', K_SCHEDULED, id)
elseif state == 'dead' then
  redis.call('ZREM', K_DEAD, id)
elseif state == 'completed' then
  redis.call('ZREM', K_COMPLETED, id)
elseif state == 'waiting' then
  redis.call('ZREM', K_WAITING, id)
elseif state == 'cancelled' then
  redis.call('ZREM', PREFIX .. 'cancelled', id)
end
if r[7] then forget_steps(id, r[8]) end
redis.call('DEL', key)
emit('removed', id, 'g', group)
return { 1, outbox_written }
