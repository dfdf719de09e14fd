--[[
  beat: one step of a consumer's loop in one call: reap expired leases, promote due jobs, then
  claim up to n. An idle beat is this one script. Promoting also readmits the throttled entries
  that may start again (includes/readmit_due.lua).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  reapLimit (>= 0): the most expired leases to reap
  ARGV[3]  promoteLimit (>= 0): the most due jobs to promote
  ARGV[4]  n (>= 0): the most jobs to claim
  ARGV[5]  leaseMs (>= 1)
  ARGV[6]  request key of the claim ("" = none; see claim.lua): a repeat reaps and promotes what
           is due again (harmless) and answers the first claim's jobs
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>,
           emq:{q}:minutes (a lease reaped out of attempts: includes/bury.lua)
  Reply    as claim's, with promoted, requeued and buried counts and the due schedulers in the
           head: { {now, paused, next due, next lease deadline, promoted, requeued, buried,
           {due schedulers}, {flow news}}, job, ... }; unlike claim's, the next due time and lease deadline
           are there even when n jobs were claimed (-1 for none), so a busy consumer can arm its
           timers. The due schedulers (at most 100, includes/due_schedulers.lua) are for the
           caller to fire (fire-schedulers.lua) once it has worked out their next slots; the
           flow news (outbox entries, includes/outbox_append.lua) for it to relay to their
           parents' queues (flow-apply.lua) and acknowledge (flow-ack.lua). The outbox, the
           schedulers and the throttled entries are read only on a queue that ever had them
           (meta `fl`, `sc`, `th`: includes/queue_meta.lua)
  Events   as reap's, then promote's, then claim's, in one entry
  Counts   as reap's: meta `stalled` += the jobs reaped
  Errors   EMQARG (a malformed number)
  Rings    the doorbell when reaping, promotion or a readmitted entry made work claimable (other consumers may be
           parked); empties both bells when fewer than n jobs were claimed, as claim does
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include reap_expired
-- @include promote_due
-- @include readmit_due
-- @include claim_reply
-- @include due_schedulers
-- @include ring_doorbell
-- @include flush_events
-- @include queue_meta

local reap_limit = arg_int(ARGV[2], 'reapLimit', 0)
local promote_limit = arg_int(ARGV[3], 'promoteLimit', 0)
local n = arg_int(ARGV[4], 'n', 0)
local lease_ms = arg_int(ARGV[5], 'leaseMs', 1)
local now = now_ms()
local requeued, buried, reaped_woke = 0, 0, false
if reap_limit > 0 then requeued, buried, reaped_woke = reap_expired(now, reap_limit) end
local promoted, promoted_woke = 0, false
if promote_limit > 0 then
  local moved, _, woke = promote_due(now, promote_limit)
  promoted, promoted_woke = moved, woke
end
-- throttled entries whose time has come (a hold over, a rate limit's window moved on) go back
local readmitted = promote_limit > 0 and readmit_due(now, promote_limit)
if reaped_woke or promoted_woke or readmitted then ring_doorbell() end
local reply = claim_reply(n, lease_ms, now, promoted, requeued, buried, true, ARGV[6])
reply[1][8] = due_schedulers(now, 100)
-- flow news to relay (docs/design.md, "Flows"): what this beat's reaping wrote (a child that died),
-- and entries older than 5 s, which the runtime that wrote them did not relay (it died, or its
-- relay failed): at most 100 a beat
local news = outbox_written
if queue_meta().fl then
  local stale = redis.call('ZRANGEBYSCORE', K_OUTBOX, '-inf', now - 5000, 'LIMIT', 0, 100)
  for _, e in ipairs(stale) do news[#news + 1] = e end
end
reply[1][9] = news
flush_events()
return reply
