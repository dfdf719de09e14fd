-- A partition's bells also go out by sharded pub/sub: SPUBLISH `kind` ('wake': claim, 'sched': re-read
-- the next due time) on the channel named as its doorbell key, in its own slot. A consumer of a
-- partitioned queue waits for every partition a master serves on one connection to it, where one
-- BLPOP cannot wait on two slots (docs/design.md, "Partitioned queues"). A partition is known by its
-- name (`q~i`: no other queue's name holds a `~`), so an unpartitioned queue pays no command.
local function publish_bell(kind)
  if string.find(PREFIX, '~', 1, true) then redis.call('SPUBLISH', K_WAKE, kind) end
end
