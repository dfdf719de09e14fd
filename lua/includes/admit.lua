-- @include lane_key
-- @include group_open
-- Make the jobs collected by batch_push claimable: add them to their lanes (or pending), record
-- new groups, and put each entry whose lane just became serviceable on the ring (each at most
-- once). Returns true when any admitted job can be claimed now (its group is open); the caller
-- then rings the doorbell once.
local function admit(batch)
  local claimable = false
  for _, g in ipairs(batch.order) do
    local lane = lane_key(g)
    local was_empty = redis.call('ZCARD', lane) == 0
    local members = batch[g]
    for i = 1, #members, 1000 do
      redis.call('ZADD', lane, unpack(members, i, math.min(i + 999, #members)))
    end
    local open = group_open(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
