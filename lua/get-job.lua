--[[
  get-job: one job's row.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  Derives  emq:{q}:job:<id>, emq:{q}:kids:<id>
  Reply    the row as a flat field/value list (with the defaults of the fields enqueue leaves
           out written in: `m`, `b`), plus its lease deadline ("lease") when active or its
           due time ("due") when scheduled, under names no row field has (the row's `r` is
           its result), and for a flow parent its children ("kids": its children hash as
           JSON, a flat list, includes/child_record.lua), for a job with durable steps its steps
           ("steps": its steps hash as JSON, a flat list, docs/design/steps.md), and while it
           waits for an event its timeout ("timeout", absent for none); {} when there is no such job
  Errors   EMQKIND
]]
-- @include keyspace
-- @include check_kind
-- @include job_key
-- @include with_defaults
-- @include kids_key
-- @include step_key

local id = ARGV[2]
check_kind(id)
local row = redis.call('HGETALL', job_key(id))
if #row == 0 then return row end
with_defaults(row)
local state, parent, steps = nil, false, false
for i = 1, #row, 2 do
  if row[i] == 's' then state = row[i + 1] end
  if row[i] == 'fw' then parent = true end
  if row[i] == 'sn' then steps = true end
end
if steps then
  row[#row + 1] = 'steps'
  row[#row + 1] = cjson.encode(redis.call('HGETALL', step_key(id)))
end
if parent then
  row[#row + 1] = 'kids'
  row[#row + 1] = cjson.encode(redis.call('HGETALL', kids_key(id)))
end
if state == 'active' then
  row[#row + 1] = 'lease'
  row[#row + 1] = redis.call('ZSCORE', K_ACTIVE, id)
elseif state == 'scheduled' then
  row[#row + 1] = 'due'
  row[#row + 1] = redis.call('ZSCORE', K_SCHEDULED, id)
elseif state == 'awaiting' then
  local timeout = redis.call('ZSCORE', PREFIX .. 'awaiting', id)
  if timeout and timeout ~= 'inf' then
    row[#row + 1] = 'timeout'
    row[#row + 1] = timeout
  end
end
return row
