--[[
  upsert-scheduler: create scheduler `id`, or replace its spec and job in place, keeping what it
  has fired (`f`, `l`), fenced on the revision its caller read (get-scheduler.lua), so an upsert
  computed from a row that changed meanwhile (another upsert, a firing) writes nothing and is
  worked out again.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  scheduler id (a name: checked by the caller)
  ARGV[3]  the revision the caller read (-1: the scheduler must not exist)
  ARGV[4]  the spec, JSON text (the caller's: the scripts read only ARGV[6])
  ARGV[5]  anchor ms of an `every` spec (-1: none)
  ARGV[6]  limit: the most slots it fires in all (-1: no limit)
  ARGV[7]  next slot ms (-1: it fires no more); a limit already reached fires no more either
  then the job it fires, as enqueue takes one: payload (JSON text), group ("" = ungrouped),
           priority, maxAttempts, backoff spec, expireAfterMs (-1: none; else each fired job
           expires that many ms after its firing: the row's `xe`)
  Derives  emq:{q}:scheduler:<id>
  Row      k spec, an anchor, m limit, d payload, g group, p priority, ma maxAttempts, b backoff, xe expireAfterMs,
           v revision (every upsert and firing adds 1), n next slot (absent: fires no more),
           l last slot fired, f slots fired, c created, u updated (server ms)
  Reply    {1, revision written, next slot or -1} or {0, the revision found (-1: none)}
  Meta     sets `sc` (the queue has schedulers: includes/queue_meta.lua) before its first entry
  Errors   EMQARG (a malformed number)
  Rings    the schedule bell when its next slot is now the queue's next due time
]]
-- @include keyspace
-- @include arg_int
-- @include now_ms
-- @include scheduler_key
-- @include ring_sched_bell_at
-- @include queue_meta

local id = ARGV[2]
local expected = arg_int(ARGV[3], 'revision', -1)
local anchor = arg_int(ARGV[5], 'anchor', -1)
local limit = arg_int(ARGV[6], 'limit', -1)
local next_slot = arg_int(ARGV[7], 'next slot', -1)
local priority = arg_int(ARGV[10], 'priority', 0)
arg_int(ARGV[11], 'maxAttempts', 1)
local expire_after = arg_int(ARGV[13] or '-1', 'expireAfterMs', -1)

local key = scheduler_key(id)
local found = redis.call('HMGET', key, 'v', 'f')
local revision = tonumber(found[1] or '-1')
if revision ~= expected then return { 0, revision } end
local fired = tonumber(found[2] or '0')
if limit >= 0 and fired >= limit then next_slot = -1 end

local now = string.format('%d', now_ms())
revision = revision + 1
redis.call('HSET', key, 'k', ARGV[4], 'd', ARGV[8], 'p', string.format('%d', priority), 'ma', ARGV[11], 'b', ARGV[12],
  'v', string.format('%d', revision), 'f', string.format('%d', fired), 'u', now)
if expected < 0 then redis.call('HSET', key, 'c', now) end
local cleared = {}
if ARGV[9] ~= '' then redis.call('HSET', key, 'g', ARGV[9]) else cleared[#cleared + 1] = 'g' end
if anchor >= 0 then redis.call('HSET', key, 'an', string.format('%d', anchor)) else cleared[#cleared + 1] = 'an' end
if limit >= 0 then redis.call('HSET', key, 'm', string.format('%d', limit)) else cleared[#cleared + 1] = 'm' end
if expire_after >= 1 then redis.call('HSET', key, 'xe', string.format('%d', expire_after)) else cleared[#cleared + 1] = 'xe' end
mark_feature('sc')
if next_slot >= 0 then
  redis.call('HSET', key, 'n', string.format('%d', next_slot))
  redis.call('ZADD', K_SCHEDULERS, next_slot, id)
else
  cleared[#cleared + 1] = 'n'
  redis.call('ZADD', K_SCHEDULERS, '+inf', id)
end
if #cleared > 0 then redis.call('HDEL', key, unpack(cleared)) end
ring_sched_bell_at(next_slot)
return { 1, revision, next_slot }
