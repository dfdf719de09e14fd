--[[
  reprocess: a dead job is claimable again with a fresh allowance of attempts. Its attempts count
  keeps rising (it is the fence token); the allowance restarts from here. It keeps `t`: a retry or
  fail that buried the job and is sent again still finds its mark there, answers dead as it did
  and writes nothing (it must not bury the job again); the next claim rewrites `t`.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Flows    a flow child tells its parent it runs again (includes/report_up.lua: a parent it
           failed waits again); a flow parent runs with its children as they stand (its `fx`,
           the child that failed it, is forgotten)
  Reply    {1 reprocessed, 0 no such job, -1 the job is not dead; {outbox entries written, for
           the caller to relay}}
  Events   `reprocessed` (j, g) when it reprocessed one
  Dedupe   the job does not take its dedupe key again: an until-finished one was released at death
  Errors   EMQKIND
  Rings    the doorbell when it is claimable now
]]
-- @include keyspace
-- @include check_kind
-- @include job_key
-- @include admit_one
-- @include ring_doorbell
-- @include emit
-- @include report_up
-- @include now_ms

local id = ARGV[2]
check_kind(id)
local key = job_key(id)
local r = redis.call('HMGET', key, 's', 'g', 'o', 'a', 'fp', 't', 'fw')
if not r[1] then return { 0, {} } end
if r[1] ~= 'dead' then return { -1, {} } end
redis.call('ZREM', K_DEAD, id)
redis.call('HSET', key, 's', 'pending', 'z', r[4])
-- its expiry goes too (it left emq:{q}:expiring when it expired): a job run again on purpose
if r[7] then redis.call('HDEL', key, 'f', 'fx', 'xa') else redis.call('HDEL', key, 'f', 'xa') end
if r[5] then report_up(id, r[5], r[6], 'p', '', now_ms()) end
if admit_one(r[2], r[3], id) then ring_doorbell() end
emit('reprocessed', id, 'g', r[2])
return { 1, outbox_written }
