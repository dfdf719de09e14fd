--[[
  key-limit: set concurrency key k's limit on running jobs, or lift it (docs/design/job-controls.md,
  "Several concurrency keys"). Raising or lifting it readmits as many jobs parked on k as it now
  has room for (back to their lanes, in their order); lowering it below the jobs already running
  takes nothing back: no job naming k starts until k is below it.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  key (a name: checked by the caller)
  ARGV[3]  limit (>= 0), or -1 to lift it
  Derives  emq:{q}:klimit, emq:{q}:kactive, emq:{q}:kwait:<key>, emq:{q}:keys, lanes
  Reply    the jobs readmitted
  Events   `key-limit` (k, l: the limit, '' lifted) when the limit changed
  Meta     sets `ks` (the claims read a row's keys only under it) before the first limit
  Errors   EMQARG
  Rings    the doorbell when readmitted jobs are claimable
]]
-- @include keyspace
-- @include arg_int
-- @include queue_meta
-- @include admit
-- @include batch_push
-- @include job_key
-- @include ring_doorbell
-- @include emit

local k = ARGV[2]
local limit = arg_int(ARGV[3], 'limit', -1)
local was = redis.call('HGET', PREFIX .. 'klimit', k)
local set = limit >= 0 and string.format('%d', limit) or false
if was == set then return 0 end
mark_feature('ks')
redis.call('SADD', PREFIX .. 'keys', k)
if set then redis.call('HSET', PREFIX .. 'klimit', k, set) else redis.call('HDEL', PREFIX .. 'klimit', k) end
-- room for parked jobs: all of them when lifted, else the limit less the jobs running
local wait = PREFIX .. 'kwait:' .. k
local room = -1
-- a limit lowered below the jobs running leaves no room (-1 stands for lifted: all of them)
if set then room = math.max(0, limit - tonumber(redis.call('HGET', PREFIX .. 'kactive', k) or '0')) end
local readmitted = 0
if room ~= 0 and redis.call('EXISTS', wait) == 1 then
  local parked = room < 0 and redis.call('ZRANGE', wait, 0, -1, 'WITHSCORES') or redis.call('ZPOPMIN', wait, room)
  if room < 0 then redis.call('DEL', wait) end
  local batch = { order = {} }
  for i = 1, #parked, 2 do
    batch_push(batch, redis.call('HGET', job_key(parked[i]), 'g'), parked[i + 1], parked[i])
    readmitted = readmitted + 1
  end
  if admit(batch) then ring_doorbell() end
end
emit('key-limit', nil, 'k', k, 'l', set or '')
return readmitted
