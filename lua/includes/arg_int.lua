-- ARGV value v as an integer of at least `min`, else an EMQARG error naming `what`.
local function arg_int(v, what, min)
  local n = tonumber(v)
  if not n or n ~= math.floor(n) or n < min then
    error(redis.error_reply('EMQARG ' .. what .. ' must be an integer >= ' .. min .. ', got ' .. tostring(v)))
  end
  return n
end
