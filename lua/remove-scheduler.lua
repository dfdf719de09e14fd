--[[
  remove-scheduler: scheduler `id` fires no more, and its row is deleted. Jobs it fired stay as
  they are (they are jobs like any other).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  scheduler id
  Derives  emq:{q}:scheduler:<id>
  Reply    1 removed, 0 no such scheduler
]]
-- @include keyspace
-- @include scheduler_key

local removed = redis.call('ZREM', K_SCHEDULERS, ARGV[2])
redis.call('DEL', scheduler_key(ARGV[2]))
return removed
