--[[
  watch-job: where a waiter starts: the events stream's last entry id, whether events are on, and
  (given an id) that job's row, read in one call so nothing can happen between them. A waiter
  that finds the row unfinished waits for the job's events after that id, and so misses none; one
  that finds it finished has its outcome from the row (Queue.waitFor, docs/design.md "Events").

  KEYS     the queue's fixed keys in keyspace order (includes/keyspace.lua)
  ARGV[1]  prefix "emq:{q}:"
  ARGV[2]  id, or '' for none (only the stream's position: addAndWait, before it adds)
  Derives  emq:{q}:job:<id>
  Reply    {last, cap, row}: last the stream's last entry id ('0' when it is empty or absent),
           cap the events cap as text ('0': events off), row as get-job answers it ({} when
           there is no such job, or no id was given)
  Errors   EMQKIND
]]
-- @include keyspace
-- @include check_kind
-- @include job_key
-- @include with_defaults
-- @include events_settings

local id = ARGV[2]
local row = {}
if id ~= '' then
  check_kind(id)
  row = redis.call('HGETALL', job_key(id))
  if #row > 0 then with_defaults(row) end
end
local last = redis.call('XREVRANGE', K_EVENTS, '+', '-', 'COUNT', 1)
local cap = events_settings()
return { last[1] and last[1][1] or '0', cap, row }
