-- @include lane_key
-- @include fifo_key
-- How many claimable jobs ring entry g holds: its zset's and its arrivals list's, in that order.
local function lane_size(g)
  return redis.call('ZCARD', lane_key(g)), redis.call('LLEN', fifo_key(g))
end
