-- @include lane_nonempty
-- @include chunked
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is not paused; a count that reaches 0 is deleted. Per group it
-- costs only its lane's length when it reopens; the limits and counts read, the counts written
-- and deleted, the paused flags and the ring push are one command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local reopened, counts, zero = {}, {}, {}
  for i, g in ipairs(t.order) do
    local count = t[g]
    local left = (tonumber(actives[i]) or 0) - count
    local limit = tonumber(limits[i])
    if left <= 0 then
      zero[#zero + 1] = g
    else
      counts[#counts + 1] = g
      counts[#counts + 1] = string.format('%d', left)
    end
    if limit and left < limit and left + count >= limit and lane_nonempty(g) then
      reopened[#reopened + 1] = g
    end
  end
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    -- a paused group stays off the ring (resume-group puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
