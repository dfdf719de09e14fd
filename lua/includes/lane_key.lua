-- The claimable zset behind a ring entry: the pending zset for UNGROUPED, else group g's lane.
local function lane_key(g)
  if g == UNGROUPED then return K_PENDING end
  return PREFIX .. 'lane:' .. g
end
