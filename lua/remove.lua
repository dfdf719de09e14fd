--[[
  remove: delete a job in any state. An active job's group slot is freed and its holder is fenced
  off from then on; a lane left empty leaves the ring.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1 removed, 0 no such job
  Events   `removed` (j, g) when it removed one
  Dedupe   the job's dedupe key (`dk`, either mode) is released while it still names the job
  Errors   EMQKIND
  Rings    the doorbell when the freed slot made work claimable
]]
-- @include keyspace
-- @include check_kind
-- @include job_key
-- @include lane_key
-- @include fifo_key
-- @include free_slot
-- @include leave_ring
-- @include ring_doorbell
-- @include emit
-- @include release_dedupe

local id = ARGV[2]
check_kind(id)
local key = job_key(id)
local r = redis.call('HMGET', key, 's', 'g', 'dk')
local state, group = r[1], r[2]
if not state then return 0 end
release_dedupe(id, r[3])
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
end
redis.call('DEL', key)
emit('removed', id, 'g', group)
return 1
