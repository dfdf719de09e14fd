-- @include lane_key
-- @include fifo_key
-- Whether ring entry g holds any claimable job, asking Redis as little as it can: the arrivals
-- list first (where most jobs wait), the zset only when the list is empty.
local function lane_nonempty(g)
  if redis.call('LLEN', fifo_key(g)) > 0 then return true end
  return redis.call('ZCARD', lane_key(g)) > 0
end
