--[[
  key-limits: every concurrency key the queue's jobs ever named, with its limit, its running jobs,
  the jobs parked on it, its rate limit and until when its rate throttles it
  (docs/design/job-controls.md, "Several concurrency keys").

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the most keys to list (>= 1)
  Derives  emq:{q}:keys, emq:{q}:klimit, emq:{q}:kactive, emq:{q}:kwait:<key>, emq:{q}:krate
  Reply    { {key, limit or -1, running, parked, "limit:periodMs" or "", throttled until (ms) or -1}, ... }
           sorted by key, at most ARGV[2]
  Errors   EMQARG
]]
-- @include keyspace
-- @include arg_int

local most = arg_int(ARGV[2], 'limit', 1)
local keys = redis.call('SMEMBERS', PREFIX .. 'keys')
table.sort(keys)
local reply = {}
for i = 1, math.min(#keys, most) do
  local k = keys[i]
  reply[i] = {
    k,
    tonumber(redis.call('HGET', PREFIX .. 'klimit', k) or '-1'),
    tonumber(redis.call('HGET', PREFIX .. 'kactive', k) or '0'),
    redis.call('ZCARD', PREFIX .. 'kwait:' .. k),
    redis.call('HGET', PREFIX .. 'krate', k) or '',
    tonumber(redis.call('ZSCORE', K_THROTTLED, KEY_MARK .. k) or '-1'),
  }
end
return reply
