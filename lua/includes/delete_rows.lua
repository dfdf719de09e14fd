-- @include job_key
-- @include release_dedupe
-- Delete the rows of jobs `ids`, one DEL per 1000 (Lua's unpack has a limit), releasing each
-- one's dedupe key (`dk`, either mode) while it still names the job. Only in a queue where a job
-- ever took a key (meta `dd`, asked once a call) is each row's `dk` read: a queue that never used
-- deduplication pays one HEXISTS a call, not a command a row.
local dedupe_used = nil
local function delete_rows(ids)
  if #ids == 0 then return end
  if dedupe_used == nil then dedupe_used = redis.call('HEXISTS', K_META, 'dd') == 1 end
  local keys = {}
  for i, id in ipairs(ids) do
    keys[i] = job_key(id)
    if dedupe_used then release_dedupe(id, redis.call('HGET', keys[i], 'dk')) end
  end
  for i = 1, #keys, 1000 do redis.call('DEL', unpack(keys, i, math.min(i + 999, #keys))) end
end
