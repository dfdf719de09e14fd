-- @include lane_serviceable
-- @include ring_doorbell
-- Put ring entry g on the ring, or take it off, to match whether it is serviceable now; `on_ring`
-- says whether it is on the ring before (for a group the script has just changed, whether it was
-- serviceable: the ring holds exactly the serviceable entries). Joining rings the doorbell, as
-- the lane's work just became claimable.
local function match_ring(g, on_ring)
  local serviceable = lane_serviceable(g)
  if serviceable and not on_ring then
    redis.call('RPUSH', K_RING, g)
    ring_doorbell()
  elseif on_ring and not serviceable then
    redis.call('LREM', K_RING, 0, g)
  end
end
