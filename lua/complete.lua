--[[
  complete: finish leased jobs, each fenced on (id, token); optionally claim the next jobs in the
  same call.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  keepMs: how long a completed row stays readable (-1 forever, 0 deleted at once)
  ARGV[3]  claimN (>= 0): jobs to claim after completing (0 = none)
  ARGV[4]  leaseMs (>= 1) for those claims
  ARGV[5]  request key of the claim ("" = none; see claim.lua)
  ARGV[6..] triples: id, token, result: the handler's result as JSON text, written to the row's
           `r` ('' for none: the handler returned nothing; the core checks it is JSON within
           maxResultBytes)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>,
           emq:{q}:minutes
  Counts   meta `completed` and the minute's bucket (emq:{q}:minutes, includes/count_minute.lua)
           += the jobs completed, one HINCRBY each a call
  Index    each completed row is indexed in emq:{q}:completed (score = finished ms) unless keepMs
           is 0, and entries older than keepMs leave it (includes/index_completed.lua)
  Reply    { {code, ...}, claim reply or {} } with code 1 completed, 0 fenced off (the row is not
           active under that token: the lease was reaped or the job removed; nothing changed).
           A repeat (the same id and token again: a reply lost and the request sent again)
           answers 1 while the completed row lasts and writes nothing (no second count, no slot
           freed twice, no doorbell); with keepMs 0 the row is gone and a repeat answers 0
  Events   `completed` (j, g, a; the result as `r`, or `rt` when it is over the queue's `erb`) per
           job completed, in ARGV order, then claim's `active` ones, in one entry; a fenced-off
           job or a repeat appends nothing
  Repeats  a row `completed` whose `t` is the given token was completed by this very settle: only
           complete writes `completed`, into a row active under the token, and leaves `t` as the
           claim wrote it; a token is handed out once in the queue (invariant 4, claim_jobs) and
           nothing moves a completed row on (it expires or is removed)
  Dedupe   a job's until-finished dedupe key (its row's `dk` without `dt`) is released
           (includes/release_settled.lua); a ttl key is left to expire
  Errors   EMQKIND, EMQARG, raised before anything is written
  Rings    the doorbell when a freed group slot made work claimable
]]
-- @include keyspace
-- @include check_kind
-- @include arg_int
-- @include now_ms
-- @include job_key
-- @include chunked
-- @include held_run
-- @include each_held
-- @include settle_cancelled
-- @include tally
-- @include free_and_admit
-- @include ring_doorbell
-- @include claim_reply
-- @include index_completed
-- @include collect_completed
-- @include flush_events
-- @include release_settled
-- @include report_up
-- @include count_minute

local keep_ms = arg_int(ARGV[2], 'keepMs', -1)
local claim_n = arg_int(ARGV[3], 'claimN', 0)
local lease_ms = arg_int(ARGV[4], 'leaseMs', 1)
for i = 6, #ARGV, 3 do check_kind(ARGV[i]) end

local now = now_ms()
-- as text once: a Lua number passed to Redis is formatted on every call. A kept row expires at
-- now + keepMs exactly (PEXPIREAT, not PEXPIRE: Redis would count a relative TTL from the moment
-- each PEXPIRE runs, up to the script's length later), the instant index_completed's trim goes by
local now_text, expire_text = string.format('%d', now), string.format('%d', now + keep_ms)
local done, freed = {}, { order = {} }
local codes = each_held(6, 3, held_run, function(id, run, i)
  local group, result = run[1], ARGV[i + 2]
  done[#done + 1] = id
  tally(freed, group)
  collect_completed(id, group, run[2], result ~= '' and result or nil)
  release_settled(id, run[3], run[4], false)
  if run[5] then report_up(id, run[5], ARGV[i + 1], 'c', result, now) end
  local key = job_key(id)
  if keep_ms == 0 then
    redis.call('DEL', key)
  else
    if result == '' then
      redis.call('HSET', key, 's', 'completed', 'f', now_text)
    else
      redis.call('HSET', key, 's', 'completed', 'f', now_text, 'r', result)
    end
    if keep_ms > 0 then redis.call('PEXPIREAT', key, expire_text) end
  end
  return 1
end, function(token, state, t)
  if state == 'completed' and t == token then return 1 end
  return 0
end, settle_cancelled)
if #done > 0 then
  chunked('ZREM', K_ACTIVE, done)
  redis.call('HINCRBY', K_META, 'completed', #done)
  count_minute('c', #done, now)
  index_completed(done, now, now_text, keep_ms)
end
if free_and_admit(freed) then ring_doorbell() end
local claimed = {}
if claim_n > 0 then claimed = claim_reply(claim_n, lease_ms, now, 0, 0, 0, false, ARGV[5]) end
flush_events()
return { codes, claimed, outbox_written }
