--[[
  reprocess-dead: up to n dead jobs, oldest first, are claimable again with a fresh allowance of
  attempts, each as reprocess leaves it (its attempts count and `t` kept, `z` set to its attempts,
  back in its lane at its own order): one chunk of Queue.reprocessDead, which calls again while
  dead jobs remain and its limit allows.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  n (>= 1): the most jobs this call takes
  ARGV[3]  request key ("" = none): the same key again answers this call's reply and takes no
           more (a reply lost and the call sent again)
  ARGV[4]  how long the request key is remembered, ms (>= 1 with a key)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>], emq:{q}:req:<key>
  Flows    a flow child tells its parent it runs again (includes/report_up.lua: a parent it
           failed waits again); a flow parent runs with its children as they stand (its `fx`,
           the child that failed it, is forgotten)
  Reply    {reprocessed, more 0|1 (dead jobs remain), {outbox entries written, for the caller to relay}}
  Events   `reprocessed` (j, g) per job, oldest first, in one entry; a repeat answered from the
           request key appends nothing
  Errors   EMQARG (a malformed number), before anything is written
  Rings    the doorbell once when any of them is claimable now
]]
-- @include keyspace
-- @include arg_int
-- @include job_key
-- @include chunked
-- @include batch_push
-- @include admit
-- @include ring_doorbell
-- @include recorded_reply
-- @include record_reply
-- @include collect_event
-- @include flush_events
-- @include report_up
-- @include now_ms

local n = arg_int(ARGV[2], 'n', 1)
local request = ARGV[3]
local ttl = 0
if request ~= '' then ttl = arg_int(ARGV[4], 'requestTtlMs', 1) end
local seen = recorded_reply(request)
if seen then return seen end

local ids = redis.call('ZRANGE', K_DEAD, 0, n - 1)
local now = #ids > 0 and now_ms() or 0
local batch = { order = {} }
for _, id in ipairs(ids) do
  local key = job_key(id)
  local r = redis.call('HMGET', key, 'g', 'o', 'a', 'fp', 't', 'fw')
  redis.call('HSET', key, 's', 'pending', 'z', r[3])
  if r[6] then redis.call('HDEL', key, 'f', 'fx', 'xa') else redis.call('HDEL', key, 'f', 'xa') end
  if r[4] then report_up(id, r[4], r[5], 'p', '', now) end
  batch_push(batch, r[1], r[2], id)
  collect_event('reprocessed', id, 'g', r[1])
end
chunked('ZREM', K_DEAD, ids)
if admit(batch) then ring_doorbell() end
flush_events()
return record_reply(request, ttl, { #ids, redis.call('EXISTS', K_DEAD), outbox_written })
