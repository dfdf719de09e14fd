--[[
  progress: write a leased job's progress into its row (`pg`), fenced on (id, token) like every
  settle: a holder whose lease was reaped, or whose job was removed, writes nothing.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the progress as JSON text, 1 to 4096 bytes (the core checks it is JSON: a number from
           0 to 100 or a small value)
  ARGV[3..] pairs: id, token (a BatchConsumer's batch writes one value to each of its jobs)
  Derives  emq:{q}:job:<id>
  Reply    {code, ...}: 1 written, 0 fenced off (the row is not active under that token: nothing
           written). The same call sent again (its reply lost) finds its value in the row and
           writes nothing, no event either, while the lease holds, and answers 0 once it does not
  Keeps    `pg` stays on the row as the job moves on (completed, retried, dead, given back) until
           a later run writes another or the row is deleted: the last progress any run reported
  Events   `progress` (j, g, a, p) per job whose progress changed, in one entry; a fenced-off job
           or a value the row holds already appends nothing
  Errors   EMQKIND, EMQARG, raised before anything is written
  Rings    never: nothing becomes claimable
]]
-- @include keyspace
-- @include check_kind
-- @include job_key
-- @include held_run
-- @include each_held
-- @include collect_event
-- @include flush_events

local value = ARGV[2]
if type(value) ~= 'string' or #value == 0 or #value > 4096 then
  error(redis.error_reply('EMQARG progress must be 1 to 4096 bytes of JSON, got ' .. tostring(value and #value) .. ' bytes'))
end
for i = 3, #ARGV, 2 do check_kind(ARGV[i]) end
local codes = each_held(3, 2, held_run, function(id, run)
  local key = job_key(id)
  -- the value it holds already (this call sent again, or the same report twice): nothing to write
  if redis.call('HGET', key, 'pg') == value then return 1 end
  redis.call('HSET', key, 'pg', value)
  collect_event('progress', id, 'g', run[1], 'a', run[2], 'p', value)
  return 1
end)
flush_events()
return codes
