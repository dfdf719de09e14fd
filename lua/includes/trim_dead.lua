-- @include job_key
-- @include release_dedupe
-- @include forget_flow
-- The queue's retention of dead jobs (meta `dage`: the most ms a dead job is kept, `dmax`: the
-- most dead jobs kept; set-dead-retention writes them), applied after a burial at `now`: at most
-- two of the oldest dead jobs past it are deleted, row and all. Two, not all: a burial does a
-- bounded amount of work, and a backlog (a retention just set or lowered) still shrinks by one
-- a burial; clean('dead') removes it at once. A queue without a retention pays one HMGET. A row
-- deleted releases its ttl dedupe key, as any removal does (an until-finished one went at death),
-- and a flow parent's unfinished children are removed (forget_flow), as removing it would; a
-- child whose parent waits for it (`onFailure: 'wait'`) tells that parent it is gone.
local function trim_dead(now)
  local r = redis.call('HMGET', K_META, 'dage', 'dmax', 'fl')
  if not r[1] and not r[2] then return end
  local victims, seen = {}, {}
  local function add(ids)
    for _, id in ipairs(ids) do
      if not seen[id] and #victims < 2 then
        seen[id] = true
        victims[#victims + 1] = id
      end
    end
  end
  if r[1] then
    add(redis.call('ZRANGEBYSCORE', K_DEAD, '-inf', string.format('%d', now - tonumber(r[1])), 'LIMIT', 0, 2))
  end
  if r[2] and #victims < 2 then
    local excess = redis.call('ZCARD', K_DEAD) - tonumber(r[2])
    if excess > 0 then add(redis.call('ZRANGE', K_DEAD, 0, math.min(excess, 2) - 1)) end
  end
  if #victims == 0 then return end
  for _, id in ipairs(victims) do
    if r[3] then
      local row = redis.call('HMGET', job_key(id), 'dk', 'fw', 'fp', 't')
      release_dedupe(id, row[1])
      if row[2] or row[3] then forget_flow(id, 'dead', row[3] or nil, row[2] or nil, row[4] or nil, now) end
    else
      release_dedupe(id, redis.call('HGET', job_key(id), 'dk'))
    end
    redis.call('DEL', job_key(id))
  end
  redis.call('ZREM', K_DEAD, unpack(victims))
end
