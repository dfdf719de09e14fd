-- Push a token `1` onto bell list `key`, keeping it at most 64 long. A full list is cut back to
-- half, not to 64, so a producer enqueueing while no consumer is parked to pop the tokens pays one
-- LTRIM per 32 pushes instead of one per push (a parked consumer needs one token, not 64).
local function push_token(key)
  if redis.call('LPUSH', key, '1') > 64 then redis.call('LTRIM', key, 0, 31) end
end
