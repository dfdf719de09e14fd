-- @include job_key
-- Move job `id`, already out of every other set, to dead with its last error; count it in
-- meta.buried (dead jobs ever, for metrics: the dead set shrinks on reprocess and remove).
local function bury(id, err, now)
  redis.call('ZADD', K_DEAD, now, id)
  redis.call('HINCRBY', K_META, 'buried', 1)
  redis.call('HSET', job_key(id), 's', 'dead', 'e', err, 'f', now)
end
