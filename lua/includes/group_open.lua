-- Whether group g may hand out a job now, its lane aside: not paused and below its limit.
local function group_open(g)
  if g == UNGROUPED then return true end
  if redis.call('SISMEMBER', K_GPAUSED, g) == 1 then return false end
  local limit = redis.call('HGET', K_GLIMIT, g)
  if not limit then return true end
  return tonumber(redis.call('HGET', K_GACTIVE, g) or '0') < tonumber(limit)
end
