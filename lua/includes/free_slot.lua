-- @include lane_nonempty
-- `count` jobs of group g left the active set: lower the group's active count. If that brought
-- the group from at or over its limit to below it, and its lane has work and it is not paused,
-- the lane goes back on the ring. Returns true when it did (work became claimable).
local function free_slot(g, count)
  if not g or g == '' then return false end
  local n = redis.call('HINCRBY', K_GACTIVE, g, -count)
  if n <= 0 then redis.call('HDEL', K_GACTIVE, g) end
  local limit = tonumber(redis.call('HGET', K_GLIMIT, g))
  if not limit or n >= limit or n + count < limit then return false end
  if not lane_nonempty(g) then return false end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  redis.call('RPUSH', K_RING, g)
  return true
end
