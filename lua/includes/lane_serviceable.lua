-- @include lane_size
-- @include group_open
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  local z, f = lane_size(g)
  if z + f == 0 then return false end
  return group_open(g)
end
