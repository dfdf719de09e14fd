--[[
  register-queue: record a queue's name in the registry of queues, so metrics and dashboards can
  list queues without scanning the keyspace. A Queue runs it once per process, with its first
  enqueue. The registry is the one key outside any queue's {q} slot.

  KEYS[1]  emq:queues (set)
  ARGV[1]  the queue's name
  Reply    1 newly registered, 0 already known
]]
return redis.call('SADD', KEYS[1], ARGV[1])
