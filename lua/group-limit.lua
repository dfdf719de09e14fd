--[[
  group-limit: set group g's limit on active jobs, or lift it. Lowering it below the jobs already
  active takes nothing back: no new claim until the group is below it.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  group
  ARGV[3]  limit (>= 0), or -1 to lift it
  Derives  emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1
  Events   `limit` (g, l: the limit, '' lifted) when the limit changed (setting the one it has, or
           lifting none, appends nothing)
  Errors   EMQARG
  Rings    the doorbell when the change put the lane back on the ring
]]
-- @include keyspace
-- @include arg_int
-- @include lane_serviceable
-- @include match_ring
-- @include emit
-- @include hash_as_table

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
