-- @include step_key
-- A row with durable steps (its `sn`) about to be deleted takes its steps with it
-- (docs/design/steps.md): its steps hash, its place among the sleepers and the jobs awaiting an
-- event, and among its wait's waiters (`wk`, the row's, nil when it waits for none).
local function forget_steps(id, wk)
  redis.call('DEL', step_key(id))
  redis.call('ZREM', PREFIX .. 'sleeping', id)
  redis.call('ZREM', PREFIX .. 'awaiting', id)
  if wk then redis.call('ZREM', wk, id) end
end
