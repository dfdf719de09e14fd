-- @include lane_key
-- @include fifo_key
-- @include delete_rows
-- @include leave_ring
-- Delete up to `budget` of ring entry g's claimable jobs, rows and all (its zset's first, then its
-- arrivals list's), and take the entry off the ring when that emptied its lane. Returns how many
-- went.
local function drop_lane(g, budget)
  if budget <= 0 then return 0 end
  local ids = {}
  local popped = redis.call('ZPOPMIN', lane_key(g), string.format('%d', budget))
  for p = 1, #popped, 2 do ids[#ids + 1] = popped[p] end
  if #ids < budget then
    for _, id in ipairs(redis.call('LPOP', fifo_key(g), string.format('%d', budget - #ids)) or {}) do ids[#ids + 1] = id end
  end
  if #ids == 0 then return 0 end
  delete_rows(ids)
  leave_ring(g)
  return #ids
end
