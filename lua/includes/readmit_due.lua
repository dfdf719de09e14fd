-- @include closed_until
-- @include reopen
-- @include queue_meta
-- Throttled entries due by `now` (at most `limit`, earliest first) start again when their hold and
-- rate limit let them (reopen), or wait on at the time they now may (a hold lengthened, a limit
-- lowered meanwhile). Returns true when work became claimable; the caller rings the doorbell.
-- Nothing is read on a queue that never throttled an entry (meta `th`).
local function readmit_due(now, limit)
  if not queue_meta().th then return false end
  local due = redis.call('ZRANGEBYSCORE', K_THROTTLED, '-inf', string.format('%d', now), 'LIMIT', 0, limit)
  local woke = false
  for _, entry in ipairs(due) do
    local at = closed_until(entry, now)
    if at > now then
      redis.call('ZADD', K_THROTTLED, string.format('%d', at), entry)
    elseif reopen(entry, now) then
      woke = true
    end
  end
  return woke
end
