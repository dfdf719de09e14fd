-- @include lane_key
-- @include fifo_key
-- Whether ring entry g holds any claimable job: its arrivals list or its zset exists (Redis
-- deletes a list or zset with no member), in one call.
local function lane_nonempty(g)
  return redis.call('EXISTS', fifo_key(g), lane_key(g)) > 0
end
