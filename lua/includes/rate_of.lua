-- The rate limit of `entry` (QUEUE_ENTRY for the queue's own, meta `rate`; a group's in K_GRATE):
-- limit and period in ms, or nil when it has none. Stored as "limit:periodMs".
local function rate_of(entry)
  local spec
  if entry == QUEUE_ENTRY then
    spec = redis.call('HGET', K_META, 'rate')
  elseif entry ~= UNGROUPED then
    spec = redis.call('HGET', K_GRATE, entry)
  end
  if not spec then return nil end
  local limit, period = string.match(spec, '^(%d+):(%d+)$')
  return tonumber(limit), tonumber(period)
end
