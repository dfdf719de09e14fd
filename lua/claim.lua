--[[
  claim: lease up to n jobs, one turn of the ring per job (fair across groups, ungrouped work
  taking its own turn), never past a group's limit, nothing while the queue is paused.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  n, the most jobs to claim (>= 1)
  ARGV[3]  leaseMs (>= 1): the lease deadline is the server's TIME plus this
  ARGV[4]  request key ("" = none): the same key again answers the jobs this claim handed out
           that are still held under its tokens (a repeat after a lost reply), claiming nothing
  Empties  the doorbell and the schedule bell when fewer than n jobs were claimed (see
           includes/claim_reply.lua): a consumer about to park must not wake for stale tokens
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>
  Reply    { {now, paused, next due, next lease deadline, 0, 0, 0}, job, ... }, each job one
           string "<id> <token> <group> <attempt of this run> <max attempts> <created at>
           <traceparent> <parent> <payload>" (a flow parent: that string and its children;
           includes/claimed_job.lua); the token (unique in the queue, kept in the row's `t`) fences every later call about
           the job
  Events   `active` (j, g, a) per job claimed, in turn order, in one entry; a repeat answered from
           the request key appends nothing
  Errors   EMQARG (a malformed number)
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include claim_reply
-- @include flush_events

local n = arg_int(ARGV[2], 'n', 1)
local lease_ms = arg_int(ARGV[3], 'leaseMs', 1)
local reply = claim_reply(n, lease_ms, now_ms(), 0, 0, 0, false, ARGV[4])
flush_events()
return reply
