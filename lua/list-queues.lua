--[[
  list-queues: the names in the registry of queues, sorted.

  KEYS[1]  emq:queues (set)
  ARGV     none
  Reply    {name, ...}
]]
local names = redis.call('SMEMBERS', KEYS[1])
table.sort(names)
return names
