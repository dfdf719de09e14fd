-- @include queue_meta
-- Takes `n` arrival sequence numbers (meta `seq`) and answers the one before the first of them.
-- A queue's very first numbers also set meta `ng`: "every generated id is new". A generated id is
-- `JOB:<seq>`, and while no caller has given an id of that form numbered above `seq`, no row
-- can hold the next one: an enqueue of generated ids alone then asks for no EXISTS (enqueue.lua).
-- A caller's id `JOB:<n>` with n above `seq` takes the flag away for good (before its row is
-- written), and so does this queue's age: a queue whose `seq` predates the flag never gets it.
local function take_seq(n)
  local last = redis.call('HINCRBY', K_META, 'seq', n)
  if last == n then
    redis.call('HSET', K_META, 'ng', '1')
    queue_meta().ng = true
  end
  return last - n
end
