--[[
  extend: renew the leases of jobs still held, fenced on (id, token).

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  leaseMs (>= 1): the new deadline is the server's TIME plus this
  ARGV[3..] pairs: id, token
  Derives  emq:{q}:job:<id>
  Reply    {deadline or 0, ...}: the new lease deadline (ms), 0 when fenced off (the holder lost
           the job: it must stop). An extend sent again renews again while the lease is active
           under the token (a later deadline, harmless) and answers 0 once it is not. A job
           whose cancel was asked (its `cx`, read once meta `cx` says any was) is renewed and
           answered `x<reason>` (a string): its holder aborts the run, whose settle ends it
           cancelled (docs/design/job-controls.md). One whose run already ended cancelled under
           the token (its settle, or the reaper when its lease lapsed: `t` is `<token>/x`) is
           answered `x<reason>` too, not renewed: its holder, which may not have heard, aborts
  Errors   EMQKIND, EMQARG
]]
-- @include keyspace
-- @include check_kind
-- @include arg_int
-- @include now_ms
-- @include held_group
-- @include each_held
-- @include queue_meta
-- @include job_key

local lease_ms = arg_int(ARGV[2], 'leaseMs', 1)
for i = 3, #ARGV, 2 do check_kind(ARGV[i]) end
local deadline = now_ms() + lease_ms
local cancels = queue_meta().cx
local codes = each_held(3, 2, held_group, function(id)
  redis.call('ZADD', K_ACTIVE, 'XX', deadline, id)
  if cancels then
    local reason = redis.call('HGET', job_key(id), 'cx')
    if reason then return 'x' .. reason end
  end
  return deadline
end)
-- a run ended cancelled under its token (CANCELLED_CODE): its reason, so a holder that missed the
-- cancel stops now (a reaped run's slot is free already), never runs on untold
for i, code in ipairs(codes) do
  if code == CANCELLED_CODE then codes[i] = 'x' .. (redis.call('HGET', job_key(ARGV[1 + 2 * i]), 'cx') or 'cancelled') end
end
return codes
