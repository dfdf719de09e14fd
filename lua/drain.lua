--[[
  drain: delete waiting jobs, rows and all: pending (every lane) and scheduled, never active
  ones, at most n rows a call: one chunk of Queue.drain, which calls again with the cursor this
  call answers until it answers "done". Lanes go first, ungrouped work then each group (SSCAN over
  emq:{q}:groups, the cursor carried from call to call), then scheduled, then the jobs parked on a
  full concurrency key (cursor "k"). A lane emptied leaves the
  ring; group counts, limits, paused flags and the groups set stay (they describe the groups, not
  their waiting jobs), and nothing rings: nothing became claimable. A job enqueued while a drain
  runs may be drained or kept, as it lands before or behind the cursor.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  n (>= 1): the most rows this call deletes; it also stops scanning groups once it has
           visited n (between two SSCAN batches, so a batch is never left half visited)
  ARGV[3]  cursor: "" to start, else what the previous call answered
  ARGV[4]  request key ("" = none): the same key again answers this call's reply and deletes
           nothing more (a reply lost and the call sent again)
  ARGV[5]  how long the request key is remembered, ms (>= 1 with a key)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>
  Reply    {deleted, cursor, {flow news}}: cursor "done" when nothing waiting is left to visit;
           the flow news (outbox entries: a flow child drained tells its parent) for the caller
           to relay
  Events   `drained` (n: the rows deleted) when it deleted any; a repeat answered from the request
           key appends nothing
  Dedupe   each row deleted releases its dedupe key while it names the job (includes/delete_rows.lua)
  Errors   EMQARG (a malformed number or cursor), before anything is written
]]
-- @include keyspace
-- @include arg_int
-- @include delete_rows
-- @include drop_lane
-- @include chunked
-- @include recorded_reply
-- @include record_reply
-- @include emit

local n = arg_int(ARGV[2], 'n', 1)
local cursor = ARGV[3]
if not (cursor == '' or cursor == 's' or cursor == 'k' or string.match(cursor, '^g%d+$')) then
  error(redis.error_reply('EMQARG not a drain cursor: ' .. tostring(cursor)))
end
local request = ARGV[4]
local ttl = 0
if request ~= '' then ttl = arg_int(ARGV[5], 'requestTtlMs', 1) end
local seen = recorded_reply(request)
if seen then return seen end

local budget, visits, deleted = n, n, 0
local function reply(next_cursor)
  if deleted > 0 then emit('drained', nil, 'n', string.format('%d', deleted)) end
  return record_reply(request, ttl, { deleted, next_cursor, outbox_written })
end

if cursor == '' then
  local went = drop_lane(UNGROUPED, budget)
  deleted, budget = deleted + went, budget - went
  if budget == 0 then return reply('') end
  cursor = 'g0'
end

while string.sub(cursor, 1, 1) == 'g' do
  local at = string.sub(cursor, 2)
  local scan = redis.call('SSCAN', K_GROUPS, at, 'COUNT', 100)
  for _, g in ipairs(scan[2]) do
    local went = drop_lane(g, budget)
    deleted, budget, visits = deleted + went, budget - went, visits - 1
    -- out of rows within this batch: the next call scans it again (an emptied lane costs two
    -- commands and no row, so it always gets further)
    if budget == 0 then return reply(cursor) end
  end
  if scan[1] == '0' then cursor = 's' else cursor = 'g' .. scan[1] end
  if visits <= 0 and cursor ~= 's' then return reply(cursor) end
end

if cursor == 's' then
  local ids = redis.call('ZRANGE', K_SCHEDULED, 0, budget - 1)
  delete_rows(ids)
  chunked('ZREM', K_SCHEDULED, ids)
  deleted, budget = deleted + #ids, budget - #ids
  if budget == 0 and redis.call('EXISTS', K_SCHEDULED) == 1 then return reply('s') end
  cursor = 'k'
end

-- the jobs parked on a full concurrency key (docs/design/job-controls.md): pending too
for _, k in ipairs(redis.call('SMEMBERS', PREFIX .. 'keys')) do
  if budget == 0 then return reply('k') end
  local wait = PREFIX .. 'kwait:' .. k
  local ids = redis.call('ZRANGE', wait, 0, budget - 1)
  delete_rows(ids)
  chunked('ZREM', wait, ids)
  deleted, budget = deleted + #ids, budget - #ids
end
if budget == 0 then return reply('k') end
return reply('done')
