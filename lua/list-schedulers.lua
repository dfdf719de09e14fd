--[[
  list-schedulers: a page of the queue's schedulers, soonest next slot first (those that fire no
  more last, by id).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  offset (>= 0)
  ARGV[3]  limit (>= 1)
  Derives  emq:{q}:scheduler:<id>
  Reply    {id, row (a flat field/value list), id, row, ...}
  Errors   EMQARG
]]
-- @include keyspace
-- @include arg_int
-- @include scheduler_key

local offset = arg_int(ARGV[2], 'offset', 0)
local limit = arg_int(ARGV[3], 'limit', 1)
local reply = {}
for _, id in ipairs(redis.call('ZRANGE', K_SCHEDULERS, offset, offset + limit - 1)) do
  reply[#reply + 1] = id
  reply[#reply + 1] = redis.call('HGETALL', scheduler_key(id))
end
return reply
