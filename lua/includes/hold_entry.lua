-- @include throttle
-- Hold ring entry `entry` (a group, or UNGROUPED) until `until_ms` (server ms), or until the end of
-- a longer hold it has: its hold in K_HOLDS, the entry throttled until then and off the ring.
-- Returns the time it is held until.
local function hold_entry(entry, until_ms)
  local held = tonumber(redis.call('HGET', K_HOLDS, entry)) or 0
  if until_ms > held then
    held = until_ms
    redis.call('HSET', K_HOLDS, entry, string.format('%d', held))
  end
  throttle(entry, held)
  redis.call('LREM', K_RING, 0, entry)
  return held
end
