-- Whether group g's pause and concurrency limit let it hand out a job now (ungrouped work has
-- neither): group_open without the throttle, for a caller that asked about many entries' throttles
-- at once (admit).
local function group_admits(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
