--[[
  clean: delete finished jobs that finished at or before a cutoff, oldest first, at most n rows a
  call: one chunk of Queue.clean, which calls again while `more` says so (a million-row clean is
  a thousand short calls, never one long one). Only finished jobs: completed (emq:{q}:completed),
  dead and cancelled (emq:{q}:cancelled); waiting work is drain's or remove's.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  state: completed | dead | cancelled
  ARGV[3]  olderThanMs (>= 0): the cutoff is the server's time less this, when ARGV[4] is -1
  ARGV[4]  cutoff (epoch ms), or -1: the first chunk works it out and answers it, and the later
           chunks of the same clean pass it, so one clean has one cutoff however long it runs
  ARGV[5]  n (>= 1): the most index entries this call takes
  ARGV[6]  request key ("" = none): the same key again answers this call's reply and deletes
           nothing more (a reply lost and the call sent again)
  ARGV[7]  how long the request key is remembered, ms (>= 1 with a key)
  Derives  emq:{q}:job:<id>, emq:{q}:req:<request key>
  Reply    {cutoff, more 0|1 (entries at or before the cutoff remain), {id, ...} the rows deleted,
           {flow news: outbox entries, a flow parent's unfinished children to remove}}.
           A completed entry whose row expired, or whose id was enqueued again, leaves the index
           and is not in the list
  Events   `cleaned` (n: the rows deleted, s: the state) when it deleted any; a repeat answered
           from the request key appends nothing
  Dedupe   each row deleted releases its dedupe key while it names the job (includes/delete_rows.lua)
  Errors   EMQARG (another state, a malformed number), before anything is written
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include job_key
-- @include chunked
-- @include delete_rows
-- @include recorded_reply
-- @include record_reply
-- @include emit

local state = ARGV[2]
if state ~= 'completed' and state ~= 'dead' and state ~= 'cancelled' then
  error(redis.error_reply('EMQARG clean takes completed, dead or cancelled, got ' .. tostring(state)))
end
local older = arg_int(ARGV[3], 'olderThanMs', 0)
local cutoff = arg_int(ARGV[4], 'cutoff', -1)
local n = arg_int(ARGV[5], 'n', 1)
local request = ARGV[6]
local ttl = 0
if request ~= '' then ttl = arg_int(ARGV[7], 'requestTtlMs', 1) end
local seen = recorded_reply(request)
if seen then return seen end

if cutoff < 0 then cutoff = now_ms() - older end
local cutoff_text = string.format('%d', cutoff)
local index = K_DEAD
if state == 'completed' then index = K_COMPLETED elseif state == 'cancelled' then index = PREFIX .. 'cancelled' end
local ids = redis.call('ZRANGEBYSCORE', index, '-inf', cutoff_text, 'LIMIT', 0, n)
local removed = {}
for _, id in ipairs(ids) do
  if redis.call('HGET', job_key(id), 's') == state then removed[#removed + 1] = id end
end
delete_rows(removed)
chunked('ZREM', index, ids)
if #removed > 0 then emit('cleaned', nil, 'n', string.format('%d', #removed), 's', state) end
local more = 0
if #redis.call('ZRANGEBYSCORE', index, '-inf', cutoff_text, 'LIMIT', 0, 1) > 0 then more = 1 end
return record_reply(request, ttl, { cutoff, more, removed, outbox_written })
