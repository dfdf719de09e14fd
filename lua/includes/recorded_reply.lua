-- What a bulk admin call answered when it ran before under request key `key` (not ""): its reply
-- was lost and the same call sent again, so it answers the same and writes nothing. nil when the
-- key is "" or unseen. The record is emq:{q}:req:<key>, written by record_reply.
local function recorded_reply(key)
  if key == '' then return nil end
  local seen = redis.call('GET', PREFIX .. 'req:' .. key)
  if seen then return cjson.decode(seen) end
  return nil
end
