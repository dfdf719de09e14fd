--[[
  fail: a leased job failed for good (an unrecoverable error): straight to dead, whatever attempts
  remain; fenced on (id, token).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] triples: id, token, error text
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    {code, ...}: 1 dead, 0 fenced off (nothing changed)
  Errors   EMQKIND, raised before anything is written
  Rings    the doorbell when a freed group slot made work claimable
]]
-- @include keyspace
-- @include check_kind
-- @include now_ms
-- @include hold
-- @include each_held
-- @include tally
-- @include free_and_admit
-- @include bury
-- @include ring_doorbell

for i = 2, #ARGV, 3 do check_kind(ARGV[i]) end
local now = now_ms()
local freed = { order = {} }
local codes = each_held(2, 3, hold, function(id, row, i)
  redis.call('ZREM', K_ACTIVE, id)
  tally(freed, row[2])
  bury(id, ARGV[i + 2], now)
  return 1
end)
if free_and_admit(freed) then ring_doorbell() end
return codes
