-- @include job_key
-- @include queue_meta
-- The fence of complete: whether job `id` is active under lease token `token`. Returns {group or
-- nil, this run's attempt (`a - z`, a number, or the row's `a` as text when there is no `z`), its dedupe key `dk` or false, its key's ttl `dt` or false,
-- a flow child's parent `fp` or false, a flow parent's `fw` or false} when it is, for the settle,
-- its `completed` event, the key it releases (release_settled) and its flow links, else nil and
-- the row's state and `t` (false when absent), for each_held's repeat check. Reads the row in one
-- HMGET of the fields this call needs, worked out once (includes/queue_meta.lua): `s`, `t` and `g`;
-- `a` and `z` only while events are on (this run's attempt is only the events'); the dedupe and
-- flow fields only once the queue ever had them. A settling batch pays per job for every field it
-- asks for, there or not (the attempt is 0 with events off, the others false).
local held_fields, held_attempt, held_links = nil, nil, nil
local function held_run(id, token)
  if not held_fields then
    local meta = queue_meta()
    held_fields = { 's', 't', 'g' }
    if meta.ecap ~= '0' then
      held_attempt = #held_fields + 1
      held_fields[held_attempt], held_fields[held_attempt + 1] = 'a', 'z'
    end
    if meta.dd or meta.fl then
      held_links = #held_fields + 1
      for i, f in ipairs({ 'dk', 'dt', 'fp', 'fw' }) do held_fields[held_links + i - 1] = f end
    end
  end
  local r = redis.call('HMGET', job_key(id), unpack(held_fields))
  if r[1] ~= 'active' or r[2] ~= token then return nil, r[1], r[2] end
  -- the row's own text when no claim was given back (`z` absent): a Lua number is formatted as a
  -- float where the event writes it
  local attempt = 0
  if held_attempt then
    local z = r[held_attempt + 1]
    attempt = z and (tonumber(r[held_attempt]) or 0) - tonumber(z) or (r[held_attempt] or 0)
  end
  if not held_links then return { r[3] or nil, attempt, false, false, false, false } end
  local l = held_links
  return { r[3] or nil, attempt, r[l] or false, r[l + 1] or false, r[l + 2] or false, r[l + 3] or false }
end
