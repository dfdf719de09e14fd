-- The kind door: only a "JOB:"-namespaced id names a job. Anything else is refused with
-- EMQKIND before the script writes anything.
local function check_kind(id)
  if type(id) ~= 'string' or #id <= 4 or #id > 256 or string.sub(id, 1, 4) ~= 'JOB:' then
    error(redis.error_reply('EMQKIND not a job id: ' .. tostring(id)))
  end
end
