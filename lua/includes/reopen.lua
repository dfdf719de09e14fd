-- @include lane_serviceable
-- A throttled entry whose hold and rate limit let it start again: out of K_THROTTLED (its hold,
-- over, forgotten), and a ring entry back on the ring when its lane is serviceable. Returns true
-- when work became claimable (for QUEUE_ENTRY: the ring has entries); the caller rings the doorbell.
local function reopen(entry)
  redis.call('ZREM', K_THROTTLED, entry)
  redis.call('HDEL', K_HOLDS, entry)
  if entry == QUEUE_ENTRY then return redis.call('LLEN', K_RING) > 0 end
  if lane_serviceable(entry) then
    redis.call('RPUSH', K_RING, entry)
    return true
  end
  return false
end
