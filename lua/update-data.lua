--[[
  update-data: replace the payload of a job not running or finished (pending or scheduled): the
  run that claims it next gets the new payload. Nothing else of the row changes. The same payload
  again writes the same.

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id
  ARGV[3]  payload (JSON text, within the cap: checked by the core before any Redis call)
  Derives  emq:{q}:job:<id>
  Reply    1 replaced, 0 no such job, -1 the job is active, completed or dead
  Errors   EMQKIND, before anything is written
]]
-- @include keyspace
-- @include check_kind
-- @include job_key

local id = ARGV[2]
check_kind(id)
local key = job_key(id)
local state = redis.call('HGET', key, 's')
if not state then return 0 end
if state ~= 'pending' and state ~= 'scheduled' then return -1 end
redis.call('HSET', key, 'd', ARGV[3])
return 1
