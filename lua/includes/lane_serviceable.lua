-- @include lane_key
-- @include group_open
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if redis.call('ZCARD', lane_key(g)) == 0 then return false end
  return group_open(g)
end
