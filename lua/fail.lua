--[[
  fail: a leased job failed for good (an unrecoverable error): straight to dead, whatever attempts
  remain; fenced on (id, token).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] triples: id, token, error text
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:minutes
           (each death counted in its minute: includes/bury.lua)
  Reply    { {code, ...}, {outbox entries written: a flow child's death, for its parent} }: 1 dead, 0 fenced off (nothing changed). A repeat (the same id and token
           again: a reply lost and the request sent again) answers 1 and writes nothing, whatever
           became of the job since short of a new claim or a remove
  Events   `dead` (j, g, a, x the error) per job failed, in ARGV order, in one entry; a fenced-off
           job or a repeat appends nothing
  Repeats  the fail leaves `<token>/f1` in `t` (includes/settled_token.lua). Only the holder of
           the token can write that mark (the fence) and a token is handed out once in the queue
           (invariant 4), so the mark means this very fail ran. reprocess keeps `t` (and `a`):
           a repeat after it still answers 1 and must not bury the job again; a claim rewrites
           `t` and remove deletes the row: then fenced. The reaper buries with the claim's bare
           token, and a retry's burial leaves `/r3`, so neither is taken for this fail's repeat
  Dedupe   the job releases its until-finished dedupe key, which leaves its row (bury)
  Errors   EMQKIND, raised before anything is written
  Rings    the doorbell when a freed group slot made work claimable
]]
-- @include keyspace
-- @include check_kind
-- @include now_ms
-- @include hold
-- @include each_held
-- @include settle_cancelled
-- @include settled_token
-- @include repeat_code
-- @include tally
-- @include free_and_admit
-- @include bury
-- @include ring_doorbell
-- @include collect_event
-- @include flush_events

for i = 2, #ARGV, 3 do check_kind(ARGV[i]) end
local now = now_ms()
local freed, outcomes = { order = {} }, { 1 }
local codes = each_held(2, 3, hold, function(id, row, i)
  redis.call('ZREM', K_ACTIVE, id)
  tally(freed, row[2])
  bury(id, ARGV[i + 2], now, settled_token(ARGV[i + 1], 'f1'), row[7], row[8], row[9], ARGV[i + 1])
  collect_event('dead', id, 'g', row[2], 'a', row[1] - row[4], 'x', ARGV[i + 2])
  return 1
end, function(token, _, t)
  return repeat_code(token, t, 'f', outcomes)
end, settle_cancelled)
if free_and_admit(freed) then ring_doorbell() end
flush_events()
return { codes, outbox_written }
