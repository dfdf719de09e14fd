--[[
  key-rate: set concurrency key k's rate limit (at most `limit` starts of jobs naming it in any
  window of `periodMs`, on the server's clock), or lift it (docs/design/job-controls.md, "A rate
  per key"). The groups' mechanism under the entry `#<key>` (includes/key_rate.lua). Live: a limit
  raised or lifted readmits the jobs parked on k that it now has room for (its concurrency limit
  still caps them); one lowered takes nothing back, and the next claim of a job naming k parks it
  and throttles k until one more start fits. Starts before a limit was set are not counted;
  lifting one deletes its log.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  key (a name: checked by the caller)
  ARGV[3]  limit (>= 1), or -1 to lift it
  ARGV[4]  periodMs (>= 1; ignored when lifting)
  Derives  emq:{q}:krate, emq:{q}:keys, emq:{q}:klimit, emq:{q}:kactive, emq:{q}:kwait:<key>,
           emq:{q}:starts:#<key>, lanes
  Reply    the jobs readmitted
  Events   `key-rate` (k, l the limit and p the period, both '' when lifted) when it changed
  Meta     sets `ks` before the first key write; `kr` counts the keys with a rate limit (absent
           for none: the claims and settles read a key's rate only under it)
  Errors   EMQARG
  Rings    the doorbell when readmitted jobs are claimable; the schedule bell when k's new
           throttle time is the queue's next due time
]]
-- @include keyspace
-- @include arg_int
-- @include queue_meta
-- @include now_ms
-- @include starts_key
-- @include closed_until
-- @include key_readmit
-- @include ring_doorbell
-- @include emit

local k = ARGV[2]
local entry = KEY_MARK .. k
local limit = arg_int(ARGV[3], 'limit', -1)
if limit == 0 then error(redis.error_reply('EMQARG limit must be an integer >= 1, or -1 to lift it, got 0')) end
local period = 0
if limit > 0 then period = arg_int(ARGV[4], 'periodMs', 1) end
local set = limit > 0 and string.format('%d:%d', limit, period) or false
if redis.call('HGET', PREFIX .. 'krate', k) == set then return 0 end
mark_feature('ks')
redis.call('SADD', PREFIX .. 'keys', k)
if set then redis.call('HSET', PREFIX .. 'krate', k, set) else redis.call('HDEL', PREFIX .. 'krate', k) end
local kr = redis.call('HLEN', PREFIX .. 'krate')
if kr > 0 then redis.call('HSET', K_META, 'kr', kr) else redis.call('HDEL', K_META, 'kr') end
queue_meta().kr = kr > 0
if not set then redis.call('DEL', starts_key(entry)) end

-- k's throttle under the new limit: moved when it still may not start one more, else over, with
-- the parked jobs it has room for readmitted (which throttles it again while its rate leaves
-- some waiting)
local now = now_ms()
local readmitted, woke = 0, false
local at = closed_until(entry, now)
if at > now then
  if redis.call('ZSCORE', K_THROTTLED, entry) then redis.call('ZADD', K_THROTTLED, string.format('%d', at), entry) end
else
  redis.call('ZREM', K_THROTTLED, entry)
  readmitted, woke = key_readmit(k, now)
end
if woke then ring_doorbell() end
emit('key-rate', nil, 'k', k, 'l', set and string.format('%d', limit) or '', 'p', set and string.format('%d', period) or '')
return readmitted
