-- The stored rate limit of `entry` ("limit:periodMs"): QUEUE_ENTRY's in meta `rate`, a group's in
-- K_GRATE, a concurrency key's ('#<key>', KEY_MARK) in emq:{q}:krate; false when it has none
-- (ungrouped work has none of its own).
local function rate_spec(entry)
  if entry == QUEUE_ENTRY then return redis.call('HGET', K_META, 'rate') end
  if entry == UNGROUPED then return false end
  if string.sub(entry, 1, 1) == KEY_MARK then return redis.call('HGET', PREFIX .. 'krate', string.sub(entry, 2)) end
  return redis.call('HGET', K_GRATE, entry)
end
