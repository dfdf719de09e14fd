-- @include lane_serviceable
-- @include key_readmit
-- A throttled entry whose hold and rate limit let it start again: out of K_THROTTLED (its hold,
-- over, forgotten), and a ring entry back on the ring when its lane is serviceable. Returns true
-- when work became claimable (for QUEUE_ENTRY: the ring has entries); the caller rings the doorbell.
-- A concurrency key's entry ('#<key>') readmits the jobs parked on it that it has room for at
-- `now` (includes/key_readmit.lua, which throttles it again while its rate leaves some waiting).
local function reopen(entry, now)
  redis.call('ZREM', K_THROTTLED, entry)
  if string.sub(entry, 1, 1) == KEY_MARK then
    local _, woke = key_readmit(string.sub(entry, 2), now)
    return woke
  end
  redis.call('HDEL', K_HOLDS, entry)
  if entry == QUEUE_ENTRY then return redis.call('LLEN', K_RING) > 0 end
  if lane_serviceable(entry) then
    redis.call('RPUSH', K_RING, entry)
    return true
  end
  return false
end
