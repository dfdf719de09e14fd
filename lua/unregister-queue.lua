--[[
  unregister-queue: take a queue's name out of the registry of queues, once obliterate has
  deleted its keys. The registry is the one key outside any queue's {q} slot, so this is a
  script of its own.

  KEYS[1]  emq:queues (set)
  ARGV[1]  the queue's name
  Reply    1 removed now, 0 was not there (a repeat)
]]
return redis.call('SREM', KEYS[1], ARGV[1])
