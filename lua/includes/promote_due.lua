-- @include job_key
-- @include chunked
-- @include batch_push
-- @include admit
-- @include first_score
-- @include collect_event
-- Up to `limit` scheduled jobs due by `now` move to their lane (or pending), earliest first.
-- Returns how many moved, the next due time still scheduled (-1 when none), and whether work
-- became claimable. A row keeps its `t`: a retry sent again after its job was promoted still
-- answers scheduled, as it did (includes/settled_token.lua). Collects a `promoted` event (j, g) per
-- job, earliest first: the caller flushes.
local function promote_due(now, limit)
  local due = redis.call('ZRANGEBYSCORE', K_SCHEDULED, '-inf', now, 'LIMIT', 0, limit)
  local woke = false
  if #due > 0 then
    chunked('ZREM', K_SCHEDULED, due)
    local batch = { order = {} }
    for _, id in ipairs(due) do
      local key = job_key(id)
      local r = redis.call('HMGET', key, 'g', 'o')
      redis.call('HSET', key, 's', 'pending')
      batch_push(batch, r[1], r[2], id)
      collect_event('promoted', id, 'g', r[1])
    end
    woke = admit(batch)
  end
  return #due, first_score(K_SCHEDULED), woke
end
