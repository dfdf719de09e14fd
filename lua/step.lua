--[[
  step: record durable steps of leased jobs (docs/design/steps.md), each fenced on (id, token): a
  step's result is written before its handler goes on, so a later run of the job returns it
  without running the step again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] tuples of 7: id, token, the step's index (1, 2, ... in the order the handler called its
           steps), what is written (`d` a run step done, `f` a run step that threw, `i` an
           invoke about to enqueue its child), how long the step ran in ms (its record's `st` is
           the server's time less this; `ft` the server's time), the step's name (for its
           event), the record: a JSON object
           without `st` and `ft` (n name, k kind, s state, r result as JSON text, e error, a
           attempts; an invoke's cq and ci its child's queue and id)
  Derives  emq:{q}:job:<id>, emq:{q}:steps:<id>, emq:{q}:kids:<id> (an invoke: its child's
           record `0|w|`, and the row's `fw` and `fd` counted again, so the child's news counts
           however early it comes: docs/design/flows.md)
  Reply    per tuple, in ARGV order: 1 written, 0 fenced off (nothing written: the job is not
           active under that token). A tuple sent again while its job is still held writes the
           same record again
  Attempts a step done restarts the job's attempts: the row's `z` becomes `a` less 1, so the next
           failure is attempt 1 of the next step (each step has the job's `maxAttempts`)
  Events   `step` (j, g, n the step's name, s its state: done or failed) per run step written, in
           one entry (an invoke's is its suspension's)
  Errors   EMQKIND, EMQARG (an index below 1, a kind not d, f or i), before anything is written
]]
-- @include keyspace
-- @include check_kind
-- @include arg_int
-- @include now_ms
-- @include job_key
-- @include hold
-- @include each_held
-- @include step_key
-- @include kids_key
-- @include child_record
-- @include queue_meta
-- @include collect_event
-- @include flush_events

for i = 2, #ARGV, 7 do
  check_kind(ARGV[i])
  arg_int(ARGV[i + 2], 'step index', 1)
  local kind = ARGV[i + 3]
  if kind ~= 'd' and kind ~= 'f' and kind ~= 'i' then
    error(redis.error_reply('EMQARG step kind must be d, f or i, got ' .. tostring(kind)))
  end
  arg_int(ARGV[i + 4], 'step ms', 0)
end

local now = now_ms()
local now_text = string.format('%d', now)
local codes = each_held(2, 7, hold, function(id, row, i)
  local attempts, group = row[1], row[2]
  local index, kind, ms, name, record = ARGV[i + 2], ARGV[i + 3], tonumber(ARGV[i + 4]), ARGV[i + 5], ARGV[i + 6]
  local key = job_key(id)
  mark_feature('st')
  -- the times appended to the caller's object: its result is never decoded here
  local written = string.sub(record, 1, -2) .. ',"st":' .. string.format('%d', now - ms) .. ',"ft":' .. now_text .. '}'
  redis.call('HSET', step_key(id), index, written)
  if kind == 'd' then
    redis.call('HSET', key, 'sn', '1', 'z', string.format('%d', attempts - 1))
  else
    redis.call('HSET', key, 'sn', '1')
  end
  local state = 'done'
  if kind == 'f' then state = 'failed' end
  if kind == 'i' then
    state = 'invoking'
    local child = cjson.decode(record)
    local kids = kids_key(id)
    redis.call('HSETNX', kids, child.cq .. '|' .. child.ci, '0|w|')
    redis.call('PERSIST', kids)
    local total, done = 0, 0
    for _, v in ipairs(redis.call('HVALS', kids)) do
      local _, k = child_record(v)
      total = total + 1
      if child_done(k) then done = done + 1 end
    end
    mark_feature('fl')
    redis.call('HSET', key, 'fw', string.format('%d', total), 'fd', string.format('%d', done))
  end
  -- an invoke's own event is its suspension's (suspend.lua), which follows the child's enqueue
  if kind ~= 'i' then collect_event('step', id, 'g', group, 'n', name, 's', state) end
  return 1
end)
flush_events()
return codes
