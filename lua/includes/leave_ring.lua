-- @include lane_serviceable
-- Ring entry g may have stopped being serviceable (its lane emptied, it was paused, its limit
-- was lowered): take it off the ring if so.
local function leave_ring(g)
  if not lane_serviceable(g) then redis.call('LREM', K_RING, 0, g) end
end
