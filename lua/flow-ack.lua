--[[
  flow-ack: forget outbox entries that were relayed (docs/design.md, "Flows"): each entry is
  removed only as it was written (a newer entry about the same job is another member), so an
  acknowledgement sent twice or late removes nothing else.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2..] the entries relayed, as the outbox holds them
  Derives  emq:{q}:outbox
  Reply    how many entries were removed
  Errors   none
  Rings    never
]]
-- @include keyspace

if #ARGV < 2 then return 0 end
local removed = 0
for i = 2, #ARGV, 1000 do
  removed = removed + redis.call('ZREM', K_OUTBOX, unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return removed
