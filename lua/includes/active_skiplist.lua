-- The active zset kept in Redis's skiplist encoding. Redis keeps a zset of at most 128 members
-- (zset-max-listpack-entries) as a listpack, where each ZADD or ZREM of a member walks the whole
-- list: a drain that claims and completes 100 jobs a call into a zset of about 100 spent some
-- 24k of its 137k instructions a job there (callgrind; 6k as a skiplist). A member longer than
-- 64 bytes (zset-max-listpack-value) makes the zset a skiplist and keeps it one, so a claim of
-- ACTIVE_SKIPLIST_BATCH jobs or more adds this member, first in its ZADD (a new zset's encoding
-- follows the first member), scored +inf: no lease ever ends there, so the reads by deadline
-- (reap's expired range) never see it, and the reads of the leases go up to, not including, +inf
-- (first_lease, lease_count, the listings). It is not a job id (ids are "JOB:..."); the keyspace
-- checker allows it and nothing else that is not a leased job (docs/design/keyspace.md).
local ACTIVE_SKIPLIST_MEMBER = '~ keeps this zset a skiplist: a listpack zset walks all its members on each ZADD and ZREM ~'
local ACTIVE_SKIPLIST_BATCH = 32
-- The earliest lease deadline (ms), -1 for none.
local function first_lease()
  return tonumber(redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]) or -1
end
-- How many jobs are leased.
local function lease_count()
  return redis.call('ZCOUNT', K_ACTIVE, '-inf', '(+inf')
end
-- The leased jobs from the `offset`th soonest deadline on, at most `limit` (ids and deadlines,
-- flat, as ZRANGE WITHSCORES answers; ids only without `scores`).
local function lease_range(offset, limit, scores)
  if scores then
    return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', offset, limit)
  end
  return redis.call('ZRANGEBYSCORE', K_ACTIVE, '-inf', '(+inf', 'LIMIT', offset, limit)
end
