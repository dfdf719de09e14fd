--[[
  list-jobs: a page of the jobs in one state, in that state's order:
    pending    lane by lane, ungrouped work first, then the groups by name, then the jobs parked
               on a full concurrency key, key by key; within a lane in the
               order a claim takes them (priority, then arrival; a job back in its place after a
               run where it was). Which lane a claim serves next turns with the ring, so this is
               each lane's order, not one global one.
    scheduled  by due time, soonest first
    active     by lease deadline, soonest first
    completed  most recently finished first (emq:{q}:completed); a row that expired since its
               entry was written, or whose id was enqueued again, is left out, so a page may hold
               fewer than `limit`
    dead       most recently buried first (as list-dead)
    waiting    flow parents waiting for their children, longest waiting first
    cancelled  most recently cancelled first (emq:{q}:cancelled)

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  state: pending | scheduled | active | completed | dead | waiting | awaiting (an event) | cancelled
  ARGV[3]  offset (>= 0)
  ARGV[4]  limit (>= 1)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    { {id, field, value, ...}, ... }, each row with its defaults written in (as get-job),
           plus its lease deadline ("lease") when active or its due time ("due") when scheduled
  Cost     one ZRANGE (or LRANGE) and one HGETALL a job; pending also sizes every lane (two
           commands a group) to find where the page starts
  Errors   EMQARG (an unknown state, a malformed number)
]]
-- @include keyspace
-- @include arg_int
-- @include job_key
-- @include active_skiplist
-- @include with_defaults
-- @include lane_size
-- @include lane_range

local state = ARGV[2]
local offset = arg_int(ARGV[3], 'offset', 0)
local limit = arg_int(ARGV[4], 'limit', 1)
local last = offset + limit - 1

-- ids, and each one's score as the field the row reads it under ('lease' or 'due'), when it has one
local ids, scores, field = {}, {}, nil
local function scored(list)
  for i = 1, #list, 2 do
    ids[#ids + 1] = list[i]
    scores[#ids] = list[i + 1]
  end
end
if state == 'scheduled' then
  field = 'due'
  scored(redis.call('ZRANGE', K_SCHEDULED, offset, last, 'WITHSCORES'))
elseif state == 'active' then
  field = 'lease'
  scored(lease_range(offset, limit, true))
elseif state == 'dead' then
  ids = redis.call('ZREVRANGE', K_DEAD, offset, last)
elseif state == 'completed' then
  ids = redis.call('ZREVRANGE', K_COMPLETED, offset, last)
elseif state == 'cancelled' then
  ids = redis.call('ZREVRANGE', PREFIX .. 'cancelled', offset, last)
elseif state == 'waiting' then
  ids = redis.call('ZRANGE', K_WAITING, offset, last)
elseif state == 'awaiting' then
  ids = redis.call('ZRANGE', PREFIX .. 'awaiting', offset, last)
elseif state == 'pending' then
  local entries = redis.call('SMEMBERS', K_GROUPS)
  table.sort(entries)
  table.insert(entries, 1, UNGROUPED)
  local skip, need = offset, limit
  for _, g in ipairs(entries) do
    if need == 0 then break end
    local zn, fn = lane_size(g)
    if skip >= zn + fn then
      skip = skip - zn - fn
    else
      for _, id in ipairs(lane_range(g, skip, math.min(need, zn + fn - skip), zn, fn)) do
        ids[#ids + 1] = id
        need = need - 1
      end
      skip = 0
    end
  end
  -- then the jobs parked on a full concurrency key, key by key in name order, each in its order
  local keys = redis.call('SMEMBERS', PREFIX .. 'keys')
  table.sort(keys)
  for _, k in ipairs(keys) do
    if need == 0 then break end
    local wait = PREFIX .. 'kwait:' .. k
    local size = redis.call('ZCARD', wait)
    if skip >= size then
      skip = skip - size
    else
      for _, id in ipairs(redis.call('ZRANGE', wait, skip, skip + need - 1)) do
        ids[#ids + 1] = id
        need = need - 1
      end
      skip = 0
    end
  end
else
  error(redis.error_reply('EMQARG state must be pending, scheduled, active, completed, dead, waiting, awaiting or cancelled, got ' .. tostring(state)))
end

local reply = {}
for i, id in ipairs(ids) do
  local row = redis.call('HGETALL', job_key(id))
  local s
  for k = 1, #row, 2 do
    if row[k] == 's' then s = row[k + 1] end
  end
  -- the completed index may name a row gone (expired) or moved on (its id enqueued again)
  if s == state then
    with_defaults(row)
    if field then
      row[#row + 1] = field
      row[#row + 1] = scores[i]
    end
    table.insert(row, 1, id)
    reply[#reply + 1] = row
  end
end
return reply
