-- @include job_key
-- @include resume_step
-- Up to `limit` waits for events whose timeout has passed by `now` end (docs/design/steps.md):
-- each one's step records `timedout` (its handler's waitForEvent resolves null) and its job goes
-- back to be claimed. Read only in a queue where a step was ever written (meta `st`). Returns
-- how many timed out; the jobs join `batch` for the caller to admit.
local function time_out_waits(now, limit, batch)
  local due = redis.call('ZRANGEBYSCORE', PREFIX .. 'awaiting', '-inf', now, 'LIMIT', 0, limit)
  for _, id in ipairs(due) do
    local r = redis.call('HMGET', job_key(id), 'sw', 'wk', 'g', 'o')
    if r[1] then
      resume_step(id, r[1], r[2], { r[3], r[4] }, { s = 'timedout', ft = now }, batch)
    else
      redis.call('ZREM', PREFIX .. 'awaiting', id)
    end
  end
  return #due
end
