-- @include lane_key
-- @include fifo_key
-- @include lane_nonempty
-- @include group_admits
-- @include chunked
-- @include queue_meta
-- Make the jobs collected by batch_push and batch_append claimable: add them to their entry's
-- zset and arrivals list, record new groups, and put each entry whose lane just became
-- serviceable on the ring (each at most once). Returns true when any admitted job can be claimed
-- now (its group is open); the caller then rings the doorbell once.
local function admit(batch)
  local claimable = false
  -- the entries' throttles in one command for the batch (group_open asks one entry at a time),
  -- once the queue ever throttled one
  local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, batch.order) or {}
  for i, g in ipairs(batch.order) do
    local e = batch[g]
    local zset = lane_key(g)
    -- whether the lane was empty, asking Redis as little as it can: RPUSH answers the list's
    -- length, and only an empty list makes the zset matter (an empty zset does not exist)
    local was_empty
    if #e.f > 0 then
      local len
      for i = 1, #e.f, 1000 do
        len = redis.call('RPUSH', fifo_key(g), unpack(e.f, i, math.min(i + 999, #e.f)))
      end
      was_empty = len == #e.f and redis.call('EXISTS', zset) == 0
    else
      was_empty = not lane_nonempty(g)
    end
    chunked('ZADD', zset, e.z)
    local open = not throttled[i] and group_admits(g)
    if was_empty then
      if g ~= UNGROUPED then redis.call('SADD', K_GROUPS, g) end
      if open then redis.call('RPUSH', K_RING, g) end
    end
    claimable = claimable or open
  end
  return claimable
end
