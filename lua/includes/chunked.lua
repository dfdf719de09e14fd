-- Runs `command key member...` over `list` in calls of at most 1000 members (Lua's unpack has a
-- limit; 1000 is even, so field-value or score-member pairs stay whole), and returns the replies
-- of a command that answers one value per member, concatenated (nothing for other commands).
local function chunked(command, key, list)
  local out = {}
  for i = 1, #list, 1000 do
    local reply = redis.call(command, key, unpack(list, i, math.min(i + 999, #list)))
    if type(reply) == 'table' then
      for _, v in ipairs(reply) do out[#out + 1] = v end
    end
  end
  return out
end
