-- The queue's fixed keys, in the order src/keyspace.ts passes them to every script, and the
-- prefix (ARGV[1], "emq:{q}:") from which the per-job and per-group keys are derived. Every
-- derived key carries the same {q} hash tag, so a script touches one cluster slot.
local K_META, K_PENDING, K_RING, K_ACTIVE, K_SCHEDULED, K_DEAD, K_WAKE, K_GPAUSED, K_GLIMIT, K_GACTIVE, K_GROUPS, K_SCHED =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
-- The index of completed rows (a zset, score = finished ms): a thirteenth key, so the twelve above
-- keep their places.
local K_COMPLETED = KEYS[13]
-- The events stream (docs/design.md, "Events"): a fourteenth key, so the thirteen above keep theirs.
local K_EVENTS = KEYS[14]
-- The schedulers (docs/design.md, "Schedulers"): a zset of scheduler ids scored by their next slot
-- (ms; +inf for a scheduler that fires no more), a fifteenth key, so the fourteen above keep theirs.
local K_SCHEDULERS = KEYS[15]
-- The throttled entries (docs/design.md, "Rate limits and holds"): a zset of ring entries (a group,
-- UNGROUPED, or QUEUE_ENTRY) scored by when they may start a job again, a sixteenth key.
local K_THROTTLED = KEYS[16]
local PREFIX = ARGV[1]
-- The groups' rate limits (group -> "limit:periodMs"; the queue's own is meta `rate`) and the
-- holds (entry -> the ms it is held until), derived from the prefix (the same slot).
local K_GRATE, K_HOLDS = PREFIX .. 'grate', PREFIX .. 'holds'
-- flows (docs/design.md, "Flows"): parents waiting for their children (score: when written), and
-- the outbox of entries for other jobs' slots (score: when appended)
local K_WAITING, K_OUTBOX = PREFIX .. 'waiting', PREFIX .. 'outbox'
-- the jobs completed and sent to dead per minute of the last hour (fields c<minute>, d<minute>:
-- includes/count_minute.lua writes them, counts.lua reads them)
local K_MINUTES = PREFIX .. 'minutes'
-- the queue's name, read off the prefix "emq:{<name>}:"
local QUEUE_NAME = string.sub(PREFIX, 6, -3)
-- The ring entry that stands for ungrouped work (the pending zset). Not a valid group name.
local UNGROUPED = '*'
-- What the queue-wide rate limit throttles: not a ring entry and not a valid group name.
local QUEUE_ENTRY = '!'
-- What marks a concurrency key's entry in the throttled set and its starts log ('#<key>', for
-- the key's rate limit: includes/key_rate.lua): no group's name starts with it.
local KEY_MARK = '#'
