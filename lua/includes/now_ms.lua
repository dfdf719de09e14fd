-- The server's clock in milliseconds: the only clock any lease or due time is read from. Read once
-- a call: a script is one atomic step, so every part of it (a settle's freed slots, the claim
-- after it, a key's rate window trimmed by one and counted by the other) sees the same instant.
-- Two readings could differ by a ms or more, and a window trimmed at the later one would drop
-- starts the earlier one still counts.
local now_ms_read = nil
local function now_ms()
  if not now_ms_read then
    local t = redis.call('TIME')
    now_ms_read = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now_ms_read
end
