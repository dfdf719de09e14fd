-- The server's clock in milliseconds: the only clock any lease or due time is read from.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
