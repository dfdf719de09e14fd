--[[
  unregister-queue: take a queue's name out of the registry of queues (and its count of
  partitions, if it had them), once obliterate has deleted its keys (of every partition). The
  registry is the one place outside any queue's {q} slot, so this is a script of its own.

  KEYS[1]  emq:queues (set of names)
  KEYS[2]  {emq:queues}:partitions (hash: name -> count of partitions)
  ARGV[1]  the queue's name
  Reply    1 removed now, 0 was not there (a repeat)
]]
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('SREM', KEYS[1], ARGV[1])
