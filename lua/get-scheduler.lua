--[[
  get-scheduler: one scheduler's row and the server's time, read together (an upsert works out
  its next slot from both).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  scheduler id
  Derives  emq:{q}:scheduler:<id>
  Reply    {now, row as a flat field/value list ({} when there is no such scheduler)}
]]
-- @include keyspace
-- @include now_ms
-- @include scheduler_key

return { now_ms(), redis.call('HGETALL', scheduler_key(ARGV[2])) }
