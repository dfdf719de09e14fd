-- Push one token onto the doorbell so a parked consumer claims again, unless the queue is
-- paused (then nothing is claimable; resume rings instead). The list never holds more than 64.
local function ring_doorbell()
  if redis.call('HEXISTS', K_META, 'paused') == 1 then return end
  if redis.call('LPUSH', K_WAKE, '1') > 64 then
    redis.call('LTRIM', K_WAKE, 0, 63)
  end
end
