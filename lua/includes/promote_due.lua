-- @include job_key
-- @include chunked
-- @include batch_push
-- @include admit
-- @include first_score
-- @include collect_event
-- @include queue_meta
-- @include step_update
-- @include time_out_waits
-- Up to `limit` scheduled jobs due by `now` move to their lane (or pending), earliest first.
-- Returns how many moved, the next due time still scheduled (-1 when none), and whether work
-- became claimable. A row keeps its `t`: a retry sent again after its job was promoted still
-- answers scheduled, as it did (includes/settled_token.lua). Collects a `promoted` event (j, g) per
-- job, earliest first: the caller flushes. In a queue with durable steps (meta `st`), a sleeper's
-- step records `done` as it moves (docs/design/steps.md), it leaves the sleepers' index, and the
-- waits for events whose timeout passed end too (includes/time_out_waits.lua), up to `limit` more.
local function promote_due(now, limit)
  local due = redis.call('ZRANGEBYSCORE', K_SCHEDULED, '-inf', now, 'LIMIT', 0, limit)
  local woke = false
  local steps = queue_meta().st
  local batch = { order = {} }
  if #due > 0 then
    chunked('ZREM', K_SCHEDULED, due)
    if steps then chunked('ZREM', PREFIX .. 'sleeping', due) end
    for _, id in ipairs(due) do
      local key = job_key(id)
      local r
      if steps then
        r = redis.call('HMGET', key, 'g', 'o', 'sw')
        if r[3] and string.sub(r[3], 1, 1) == 's' then
          local record = step_update(id, string.sub(r[3], 2), { s = 'done', ft = now })
          redis.call('HDEL', key, 'sw')
          collect_event('step', id, 'g', r[1], 'n', record and record.n, 's', 'done')
        end
      else
        r = redis.call('HMGET', key, 'g', 'o')
      end
      redis.call('HSET', key, 's', 'pending')
      batch_push(batch, r[1], r[2], id)
      collect_event('promoted', id, 'g', r[1])
    end
  end
  local timed_out = steps and time_out_waits(now, limit, batch) or 0
  if #due > 0 or timed_out > 0 then woke = admit(batch) end
  return #due + timed_out, first_score(K_SCHEDULED), woke
end
