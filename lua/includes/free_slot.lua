-- @include lane_key
-- A job of group g left the active set: decrement the group's active count. If that brought the
-- group from its limit to just below it, and its lane has work and it is not paused, the lane
-- goes back on the ring. Returns true when it did (work became claimable).
local function free_slot(g)
  if not g or g == '' then return false end
  local n = redis.call('HINCRBY', K_GACTIVE, g, -1)
  if n <= 0 then redis.call('HDEL', K_GACTIVE, g) end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit or n ~= tonumber(limit) - 1 then return false end
  if redis.call('ZCARD', lane_key(g)) == 0 then return false end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  redis.call('RPUSH', K_RING, g)
  return true
end
