--[[
  list-queues: the names in the registry of queues, sorted, and the partitioned ones' counts.

  KEYS[1]  emq:queues (set of names)
  KEYS[2]  {emq:queues}:partitions (hash: name -> count of partitions)
  ARGV     none
  Reply    {{name, ...}, {name, count, ...}}
]]
local names = redis.call('SMEMBERS', KEYS[1])
table.sort(names)
return {names, redis.call('HGETALL', KEYS[2])}
