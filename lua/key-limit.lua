--[[
  key-limit: set concurrency key k's limit on running jobs, or lift it (docs/design/job-controls.md,
  "Several concurrency keys"). Raising or lifting it readmits as many jobs parked on k as it now
  has room for (back to their lanes, in their order; its rate limit, when it has one, caps them);
  lowering it below the jobs already running takes nothing back: no job naming k starts until k
  is below it.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  key (a name: checked by the caller)
  ARGV[3]  limit (>= 0), or -1 to lift it
  Derives  emq:{q}:klimit, emq:{q}:kactive, emq:{q}:kwait:<key>, emq:{q}:keys, lanes
  Reply    the jobs readmitted
  Events   `key-limit` (k, l: the limit, '' lifted) when the limit changed
  Meta     sets `ks` (the claims read a row's keys only under it) before the first limit
  Errors   EMQARG
  Rings    the doorbell when readmitted jobs are claimable; the schedule bell when its rate
           throttles the key at the queue's next due time
]]
-- @include keyspace
-- @include arg_int
-- @include queue_meta
-- @include now_ms
-- @include key_readmit
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
-- the parked jobs it has room for now go back to their lanes (a limit lowered below the jobs
-- running has none; its rate, when it has one, caps them)
local readmitted, woke = key_readmit(k, now_ms())
if woke then ring_doorbell() end
emit('key-limit', nil, 'k', k, 'l', set or '')
return readmitted
