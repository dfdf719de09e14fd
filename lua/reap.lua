--[[
  reap: jobs whose lease ended go back to their lane (or pending) in their original order, or to
  dead once their attempts are used up; their group slots are freed. At most `limit` per call.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  limit (>= 1)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:minutes
           (each burial counted in its minute: includes/bury.lua)
  Reply    {requeued, buried}
  Events   `stalled` (j, g, a) per job, each followed by `dead` (j, g, a, x) when it is buried, in
           one entry
  Counts   meta `stalled` += the jobs reaped, one HINCRBY a call (/metrics)
  Dedupe   a job buried releases its until-finished dedupe key, which leaves its row (bury)
  Errors   EMQARG
  Rings    the doorbell when work became claimable
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include reap_expired
-- @include ring_doorbell
-- @include flush_events

local limit = arg_int(ARGV[2], 'limit', 1)
local requeued, buried, woke = reap_expired(now_ms(), limit)
if woke then ring_doorbell() end
flush_events()
return { requeued, buried }
