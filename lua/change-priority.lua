--[[
  change-priority: give a job not running or finished (pending or scheduled) another priority. Its
  order becomes `priority * 2^32 + (its seq mod 2^32)`: among jobs of the new priority it keeps
  its place by arrival. A pending job moves within its lane (out of the arrivals list, if it was
  there, into the lane's zset: a list takes only newer orders than its own), so the lane, the ring
  and the group counts are as they were; a scheduled one keeps its due time and takes the new
  order with it to its lane when promoted. The same priority again changes nothing.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  ARGV[3]  priority (0 to 2097151, lower runs first)
  Derives  emq:{q}:job:<id>, emq:{q}:lane:<group>, emq:{q}:fifo[:<group>]
  Reply    1 changed (or already that priority), 0 no such job, -1 the job is active, completed or
           dead
  Errors   EMQKIND, EMQARG (a priority out of range), before anything is written
]]
-- @include keyspace
-- @include check_kind
-- @include arg_int
-- @include job_key
-- @include lane_key
-- @include fifo_key
-- @include key_slots

local id = ARGV[2]
check_kind(id)
local priority = arg_int(ARGV[3], 'priority', 0)
if priority > 2097151 then error(redis.error_reply('EMQARG priority must be at most 2097151, got ' .. ARGV[3])) end
local key = job_key(id)
local r = redis.call('HMGET', key, 's', 'g', 'o', 'p', 'ck')
if not r[1] then return 0 end
if r[1] ~= 'pending' and r[1] ~= 'scheduled' then return -1 end
-- a job parked on a full concurrency key waits there, in no lane: it is not moved (key_slots)
if r[5] and r[1] == 'pending' and key_slots().parked(id, r[5]) then return -1 end
if tonumber(r[4] or '0') == priority then return 1 end

local entry = r[2] or UNGROUPED
-- a pending job's order is its zset score, or its row's `o` when it waits in an arrivals list
local order, in_zset = nil, false
if r[1] == 'pending' then
  order = redis.call('ZSCORE', lane_key(entry), id)
  in_zset = order ~= false
end
if not in_zset then order = r[3] end
local SPAN = 4294967296
local new_order = string.format('%d', priority * SPAN + tonumber(order) % SPAN)
if priority == 0 then
  redis.call('HDEL', key, 'p')
  redis.call('HSET', key, 'o', new_order)
else
  redis.call('HSET', key, 'o', new_order, 'p', string.format('%d', priority))
end
if r[1] == 'pending' then
  if not in_zset then redis.call('LREM', fifo_key(entry), 1, id) end
  redis.call('ZADD', lane_key(entry), new_order, id)
end
return 1
