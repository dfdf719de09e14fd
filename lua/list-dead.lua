--[[
  list-dead: the most recently buried jobs, newest first.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  offset (>= 0)
  ARGV[3]  limit (>= 1)
  Derives  emq:{q}:job:<id>
  Reply    { {id, field, value, ...}, ... }, each row with its defaults written in (as get-job)
  Errors   EMQARG
]]
-- @include keyspace
-- @include arg_int
-- @include job_key
-- @include with_defaults

local offset = arg_int(ARGV[2], 'offset', 0)
local limit = arg_int(ARGV[3], 'limit', 1)
local reply = {}
for _, id in ipairs(redis.call('ZREVRANGE', K_DEAD, offset, offset + limit - 1)) do
  local entry = redis.call('HGETALL', job_key(id))
  if #entry > 0 then with_defaults(entry) end
  table.insert(entry, 1, id)
  reply[#reply + 1] = entry
end
return reply
