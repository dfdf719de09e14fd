-- @include lane_key
-- @include fifo_key
-- @include leave_ring
-- @include key_slots
-- Pending job `id` of ring entry `entry` (its group, or UNGROUPED) leaves the place it waits in:
-- a concurrency key's wait when it is parked there (`ck`, its row's keys; nil for none), else its
-- lane's zset or arrivals list (found by LREM, linear in the list's length), and the entry leaves
-- the ring when its lane emptied. A job with keys that leaves its lane gives back the room a key
-- may have readmitted it with (key_slots' credit): the caller admits those (admit_credited).
local function leave_lane(id, entry, ck)
  if ck then
    if key_slots().unpark(id, ck) then return end
    key_slots().credit(ck)
  end
  if redis.call('ZREM', lane_key(entry), id) == 0 then redis.call('LREM', fifo_key(entry), 1, id) end
  leave_ring(entry)
end
