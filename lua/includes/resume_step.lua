-- @include job_key
-- @include step_update
-- @include batch_push
-- @include collect_event
-- A suspended job goes back to be claimed (docs/design/steps.md): the step it waited on (its
-- row's `sw`, kind letter then index) is rewritten with `fields`, the row leaves its suspension
-- (`sw`, and `wk` the waiters zset of a wait, whose member it stops being), and it joins its lane
-- in its place (`batch`, admitted by the caller). `row` is {group or false, order} as read.
-- Collects a `step` event (j, g, n the step's name, s its new state).
local function resume_step(id, sw, wk, row, fields, batch)
  local key = job_key(id)
  local record = step_update(id, string.sub(sw, 2), fields)
  if wk then
    redis.call('ZREM', wk, id)
    redis.call('ZREM', PREFIX .. 'awaiting', id)
    redis.call('HDEL', key, 'sw', 'wk')
  else
    redis.call('HDEL', key, 'sw')
  end
  redis.call('HSET', key, 's', 'pending')
  batch_push(batch, row[1], row[2], id)
  collect_event('step', id, 'g', row[1], 'n', record and record.n, 's', record and record.s)
end
