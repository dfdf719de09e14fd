--[[
  cancel: end jobs that should not run, or should stop (docs/design/job-controls.md). A job not
  running (pending, scheduled, waiting for its children or its invoked child, awaiting an event)
  ends cancelled at once; a running one (active) keeps its lease and its group slot, is marked
  `cx` (its cancel asked), and its holder is told: by SPUBLISH on its cancel channel now (a
  parked Node consumer aborts the handler's signal), and by the next renewal of its lease
  (extend answers `x<reason>`). The settle of its run, whatever the handler returned, ends it
  cancelled (includes/settle_cancelled.lua), and so does the reaper if its lease lapses first.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  reason: text kept in the row's `cx` (the core checks it: at most 1000 characters)
  ARGV[3]  "" (a caller's cancel), or "<queue>|<parent id>": a cancelled flow parent's child,
           cancelled only while its row's `fp` names that parent (an id enqueued again since is
           another job) and told to no parent
  ARGV[4..] ids
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:cancelled,
           emq:{q}:sleeping, emq:{q}:awaiting, a wait's waiters key (the row's `wk`),
           emq:{q}:kids:<id>, emq:{q}:cancel (the sharded channel its holders hear)
  Flows    a flow child tells its parent, as a death (the parent's policy for a failed child
           decides: includes/end_cancelled.lua); a waiting flow parent has each unfinished child
           cancelled in turn, through the outbox (`k|<queue>|<id>|<child queue>|<child id>`)
  Reply    { {code per id}, {outbox entries written, for the caller to relay} }: 1 cancelled
           now, 2 cancelling (it runs: its holder is told, its settle ends it cancelled), 3
           cancelled already (a repeat answers as the first did, or as it ended since), 4
           finished (completed or dead: nothing written), 0 no such job (or, with a parent,
           not that parent's child)
  Events   `cancelled` (j, g, x the reason) per job ended now, in one entry; `cancelling`
           (j, g, x) per running job marked
  Dedupe   a job ended now releases its until-finished dedupe key (includes/end_cancelled.lua)
  Errors   EMQKIND, before anything is written
  Rings    nothing: a cancel makes no work claimable (a running job's group slot is freed by
           the settle that ends it, which rings then)
]]
-- @include keyspace
-- @include check_kind
-- @include now_ms
-- @include job_key
-- @include kids_key
-- @include child_record
-- @include outbox_append
-- @include end_cancelled
-- @include leave_lane
-- @include admit_credited
-- @include ring_doorbell
-- @include collect_event
-- @include flush_events

local reason, parent = ARGV[2], ARGV[3]
for i = 4, #ARGV do check_kind(ARGV[i]) end
local now = now_ms()
local codes = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  local key = job_key(id)
  local r = redis.call('HMGET', key, 's', 'g', 'dk', 'dt', 'fp', 'fw', 't', 'sn', 'wk', 'cx', 'ck')
  local state, group, fp = r[1], r[2] or nil, r[5] or nil
  local code = 0
  if state and parent ~= '' then
    -- a cancelled parent's child: this row only while it is still that parent's
    if not fp or string.sub(fp, 1, #parent + 1) ~= parent .. '|' then state = nil end
    fp = nil
  end
  if not state then
    code = 0
  elseif state == 'cancelled' then
    code = 3
  elseif state == 'completed' or state == 'dead' then
    code = 4
  elseif state == 'active' then
    if not r[10] then
      -- meta `cx` counts the running jobs whose cancel is asked: the settles read their rows' `cx` while it is above 0
      redis.call('HINCRBY', K_META, 'cx', 1)
      redis.call('HSET', key, 'cx', reason)
      redis.call('SPUBLISH', PREFIX .. 'cancel', id .. ' ' .. reason)
      collect_event('cancelling', id, 'g', group, 'x', reason)
    end
    code = 2
  else
    if state == 'pending' then
      leave_lane(id, group or UNGROUPED, r[11] or nil)
    elseif state == 'scheduled' then
      redis.call('ZREM', K_SCHEDULED, id)
      if r[8] then redis.call('ZREM', PREFIX .. 'sleeping', id) end
    elseif state == 'waiting' then
      redis.call('ZREM', K_WAITING, id)
    elseif state == 'awaiting' then
      redis.call('ZREM', PREFIX .. 'awaiting', id)
      if r[9] then redis.call('ZREM', r[9], id) end
    end
    -- a suspended job's wait leaves with it (its steps stay, for reading)
    if r[8] then redis.call('HDEL', key, 'wk', 'sw') end
    if r[6] then
      -- its unfinished children are cancelled in their own slots, fenced on this parent
      local flat = redis.call('HGETALL', kids_key(id))
      for k = 1, #flat, 2 do
        local _, kind = child_record(flat[k + 1])
        if not child_done(kind) then outbox_append('k|' .. QUEUE_NAME .. '|' .. id .. '|' .. flat[k], now) end
      end
    end
    end_cancelled(id, group, reason, now, nil, r[3], r[4], fp, r[7] or nil)
    code = 1
  end
  codes[#codes + 1] = code
end
if admit_credited() then ring_doorbell() end
flush_events()
return { codes, outbox_written }
