--[[
  release: give back leased jobs that were never started (an edge beat ran out of time before
  their turn), fenced on (id, token): back to their lane (or pending) in their original order,
  their claim not counted as an attempt, their group slots freed. A job given back with a hold
  (its handler threw RateLimitedError: the API it calls said 429) also holds its group, or the
  ungrouped lane, for that many ms (includes/hold_entry.lua), before its lane is looked at again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] triples: id, token, hold ms (0: none)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:holds
  Reply    {code, ...}: 1 released, 0 fenced off (nothing changed). A repeat (the same id and
           token again: a reply lost and the request sent again) answers 1 and writes nothing,
           so the claim is un-counted once, until the job is claimed again or removed
  Events   `released` (j, g) per job given back, in ARGV order, then `held` (g, u) per hold, in
           one entry; a fenced-off job or a repeat appends nothing (and holds nothing)
  Repeats  the release leaves `<token>/g1` in `t` (includes/settled_token.lua) as it writes `a`
           back down. Only the holder of the token can write that mark (the fence) and a token
           is handed out once in the queue (invariant 4), so the mark means this very release
           ran: the pending row under a bare token that a reaped lease leaves (`a` kept) is not
           taken for it. move-group keeps `t`; a claim rewrites it (the next holder's token) and
           remove deletes the row: then fenced
  Errors   EMQKIND, EMQARG (a hold that is not an integer >= 0), raised before anything is written
  Rings    the doorbell when released work is claimable
]]
-- @include keyspace
-- @include check_kind
-- @include job_key
-- @include hold
-- @include each_held
-- @include settle_cancelled
-- @include settled_token
-- @include repeat_code
-- @include tally
-- @include batch_push
-- @include free_and_admit
-- @include arg_int
-- @include now_ms
-- @include hold_entry
-- @include ring_doorbell
-- @include collect_event
-- @include flush_events

for i = 2, #ARGV, 3 do
  check_kind(ARGV[i])
  arg_int(ARGV[i + 2], 'hold', 0)
end
local freed, batch, outcomes, holds = { order = {} }, { order = {} }, { 1 }, {}
local codes = each_held(2, 3, hold, function(id, row, i)
  local attempts, group, order = row[1], row[2], row[6]
  redis.call('ZREM', K_ACTIVE, id)
  tally(freed, group)
  redis.call('HSET', job_key(id), 's', 'pending', 'a', attempts - 1, 't', settled_token(ARGV[i + 1], 'g1'))
  batch_push(batch, group, order, id)
  collect_event('released', id, 'g', group)
  local ms = tonumber(ARGV[i + 2])
  if ms > 0 then
    local entry = group or UNGROUPED
    holds[entry] = math.max(holds[entry] or 0, ms)
  end
  return 1
end, function(token, _, t)
  return repeat_code(token, t, 'g', outcomes)
end, settle_cancelled)
-- the holds first, so the lanes the jobs go back to stay off the ring
if next(holds) then
  local now = now_ms()
  for entry, ms in pairs(holds) do
    local held = hold_entry(entry, now + ms)
    collect_event('held', nil, 'g', entry ~= UNGROUPED and entry or nil, 'u', string.format('%d', held))
  end
end
if free_and_admit(freed, batch) then ring_doorbell() end
flush_events()
return { codes, outbox_written }
