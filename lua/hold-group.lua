--[[
  hold-group: no job of ring entry g (a group, or "*" for ungrouped work) starts for `ms` from now,
  on the server's clock (after a 429 from what its jobs call, say); other entries keep flowing.
  A hold already longer is kept; its leased jobs finish normally and new jobs still enter its lane.
  Sent again (a lost reply), it holds until `ms` after the repeat: a few ms more, nothing else.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  the entry: a group, or "*"
  ARGV[3]  ms (>= 1)
  Derives  emq:{q}:holds
  Reply    the time the entry is held until (server ms)
  Events   `held` (g for a group, u until when)
  Errors   EMQARG
  Rings    the schedule bell when the hold's end is the queue's next due time
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include hold_entry
-- @include emit

local entry = ARGV[2]
local ms = arg_int(ARGV[3], 'ms', 1)
local held = hold_entry(entry, now_ms() + ms)
emit('held', nil, 'g', entry ~= UNGROUPED and entry or nil, 'u', string.format('%d', held))
return held
