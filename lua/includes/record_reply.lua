-- Remember `reply` under request key `key` for `ttl` ms (nothing for key ""), so the same call sent
-- again answers it (recorded_reply); returns `reply`. A reply is numbers and strings in nested
-- lists, which cjson carries both ways (an empty list comes back as an empty list).
local function record_reply(key, ttl, reply)
  if key ~= '' then redis.call('SET', PREFIX .. 'req:' .. key, cjson.encode(reply), 'PX', ttl) end
  return reply
end
