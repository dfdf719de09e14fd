-- @include job_key
-- Move job `id`, already out of every other set, to dead with its last error.
local function bury(id, err, now)
  redis.call('ZADD', K_DEAD, now, id)
  redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now)
end
