-- @include job_key
-- @include release_dedupe
-- @include forget_flow
-- @include now_ms
-- @include forget_steps
-- Delete the rows of jobs `ids`, one DEL per 1000 (Lua's unpack has a limit), releasing each
-- one's dedupe key (`dk`, either mode) while it still names the job. Only in a queue where a job
-- ever took a key (meta `dd`, asked once a call) is each row's `dk` read: a queue that never used
-- deduplication pays one HMGET a call, not a command a row. Likewise in a queue where a job of a
-- flow was ever written (meta `fl`), each row's links are read and settled (forget_flow: a child
-- tells its parent, a parent has its unfinished children removed, through the outbox), and in a
-- queue where a step was ever recorded (meta `st`), each row's steps go with it (forget_steps).
local dedupe_used, flows_used, steps_used = nil, nil, nil
local function delete_rows(ids)
  if #ids == 0 then return end
  if dedupe_used == nil then
    local m = redis.call('HMGET', K_META, 'dd', 'fl', 'st')
    dedupe_used, flows_used, steps_used = m[1] ~= false, m[2] ~= false, m[3] ~= false
  end
  local keys = {}
  local now = flows_used and now_ms() or 0
  for i, id in ipairs(ids) do
    keys[i] = job_key(id)
    if flows_used then
      local r = redis.call('HMGET', keys[i], 'dk', 's', 'fp', 'fw', 't')
      release_dedupe(id, r[1])
      if r[3] or r[4] then forget_flow(id, r[2], r[3], r[4], r[5], now) end
    elseif dedupe_used then
      release_dedupe(id, redis.call('HGET', keys[i], 'dk'))
    end
    if steps_used then
      local s = redis.call('HMGET', keys[i], 'sn', 'wk')
      if s[1] then forget_steps(id, s[2]) end
    end
  end
  for i = 1, #keys, 1000 do redis.call('DEL', unpack(keys, i, math.min(i + 999, #keys))) end
end
