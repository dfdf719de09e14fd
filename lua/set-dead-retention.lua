--[[
  set-dead-retention: how long dead jobs are kept and how many, a setting of the queue stored in
  its meta (`dage`, `dmax`), so every runtime that buries a job applies the same one
  (includes/trim_dead.lua: each burial deletes at most two of the oldest dead jobs past it).
  Setting it deletes nothing by itself: clean('dead') removes a backlog at once.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  maxAgeMs (>= 0), or -1 for no age limit
  ARGV[3]  maxCount (>= 0), or -1 for no count limit
  Reply    {maxAgeMs or -1, maxCount or -1}: the retention now
  Errors   EMQARG (a malformed number), before anything is written
]]
-- @include keyspace
-- @include arg_int

local age = arg_int(ARGV[2], 'maxAgeMs', -1)
local count = arg_int(ARGV[3], 'maxCount', -1)
if age < 0 then redis.call('HDEL', K_META, 'dage') else redis.call('HSET', K_META, 'dage', string.format('%d', age)) end
if count < 0 then redis.call('HDEL', K_META, 'dmax') else redis.call('HSET', K_META, 'dmax', string.format('%d', count)) end
return { age, count }
