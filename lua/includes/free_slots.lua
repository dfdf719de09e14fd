-- @include lanes_nonempty
-- @include chunked
-- @include queue_meta
-- Free the group slots counted by tally ({order = groups, [g] = count}): lower each group's
-- active count, and put back on the ring every group this brought from its limit to below it
-- whose lane has work and which is neither paused nor throttled; a count that reaches 0 is deleted. The limits and
-- counts read, the counts written and deleted, whether the reopened groups' lanes have work
-- (lanes_nonempty: one EXISTS when they all do), the paused flags and the ring push are one
-- command each for the whole batch.
-- Returns true when any group went back on the ring (in tally order).
local function free_slots(t)
  if #t.order == 0 then return false end
  local limits = chunked('HMGET', K_GLIMIT, t.order)
  local actives = chunked('HMGET', K_GACTIVE, t.order)
  local below, counts, zero = {}, {}, {}
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
    if limit and left < limit and left + count >= limit then below[#below + 1] = g end
  end
  -- of the groups brought below their limit, those with work reopen (a group whose lane is empty
  -- joins the ring with its next job)
  local reopened = lanes_nonempty(below)
  local back = {}
  if #reopened > 0 then
    local paused = chunked('SMISMEMBER', K_GPAUSED, reopened)
    local throttled = queue_meta().th and chunked('ZMSCORE', K_THROTTLED, reopened) or {}
    -- a paused group stays off the ring (resume-group puts it back), and so does a throttled one
    -- (held, or at its rate limit: includes/readmit_due.lua puts it back), its lane's work waiting
    for i, g in ipairs(reopened) do
      if paused[i] ~= 1 and not throttled[i] then back[#back + 1] = g end
    end
  end
  chunked('HSET', K_GACTIVE, counts)
  chunked('HDEL', K_GACTIVE, zero)
  chunked('RPUSH', K_RING, back)
  return #back > 0
end
