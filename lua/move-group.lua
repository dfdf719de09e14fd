--[[
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
-- @include keyspace
-- @include check_kind
-- @include job_key
-- @include lane_key
-- @include fifo_key
-- @include key_slots
-- @include leave_ring
-- @include admit_one
-- @include ring_doorbell

local id, to = ARGV[2], ARGV[3]
check_kind(id)
local key = job_key(id)
local r = redis.call('HMGET', key, 's', 'g', 'o', 'ck')
if not r[1] then return 0 end
if r[1] ~= 'pending' then return -1 end
-- a job parked on a full concurrency key waits there, in no lane: it is not moved (key_slots)
if r[4] and r[1] == 'pending' and key_slots().parked(id, r[4]) then return -1 end
local from = r[2] or UNGROUPED
-- the order is the zset score, or the row's `o` for a job in an arrivals list; in its new lane
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
