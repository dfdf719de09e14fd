-- @include lane_nonempty
-- @include group_open
-- Whether ring entry g belongs on the ring: its lane is non-empty and the group is open.
local function lane_serviceable(g)
  if not lane_nonempty(g) then return false end
  return group_open(g)
end
