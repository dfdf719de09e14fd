--[[
  register-queue: record a queue's name in the registry of queues, so metrics and dashboards can
  list queues without scanning the keyspace; a partitioned queue also records its count of
  partitions, so the HTTP API and the CLI address it by its name. A Queue runs it once per process,
  with its first enqueue (a partition's Queue registers the queue it is a part of). The registry is
  the one place outside any queue's {q} slot: its two keys share a slot.

  KEYS[1]  emq:queues (set of names)
  KEYS[2]  {emq:queues}:partitions (hash: name -> count of partitions)
  ARGV[1]  the queue's name
  ARGV[2]  its count of partitions, 0 for an unpartitioned queue
  Reply    1 newly registered, 0 already known
  Errors   EMQPARTITION: the name is registered partitioned and this queue is not, or with another
           count, or registered unpartitioned and this queue is partitioned (nothing written)
]]
local name, count = ARGV[1], tonumber(ARGV[2])
local known = redis.call('HGET', KEYS[2], name)
if count == 0 then
  if known then
    return redis.error_reply('EMQPARTITION queue ' .. name .. ' is partitioned (' .. known .. ' partitions): open it with partitions: ' .. known)
  end
  return redis.call('SADD', KEYS[1], name)
end
if known then
  if tonumber(known) ~= count then
    return redis.error_reply('EMQPARTITION queue ' .. name .. ' has ' .. known .. ' partitions, not ' .. count .. ': a group would change partition, so the count is fixed')
  end
  return 0
end
if redis.call('SISMEMBER', KEYS[1], name) == 1 then
  return redis.error_reply('EMQPARTITION queue ' .. name .. ' exists unpartitioned: obliterate it or choose another name to partition it')
end
redis.call('HSET', KEYS[2], name, count)
return redis.call('SADD', KEYS[1], name)
