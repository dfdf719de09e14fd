--[[
  promote: scheduled jobs that are due move to their lane (or pending), earliest first, at most
  `limit` per call; and throttled entries that may start again go back on the ring
  (includes/readmit_due.lua), at most `limit` of them.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  limit (>= 1)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    {promoted, next due time still scheduled or -1}
  Events   `promoted` (j, g) per job, earliest first, in one entry
  Errors   EMQARG
  Rings    the doorbell when promoted or readmitted work is claimable
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include promote_due
-- @include readmit_due
-- @include ring_doorbell
-- @include flush_events

local limit = arg_int(ARGV[2], 'limit', 1)
local now = now_ms()
local moved, next_due, woke = promote_due(now, limit)
-- throttled entries whose time has come go back (includes/readmit_due.lua)
if readmit_due(now, limit) then woke = true end
if woke then ring_doorbell() end
flush_events()
return { moved, next_due }
