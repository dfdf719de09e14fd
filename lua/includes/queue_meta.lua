-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: `paused` (true or false), `ecap` and `erb` (the events
-- settings as stored, false when unset: includes/events_settings.lua), `rate` (the queue's rate
-- limit "limit:periodMs", false for none), `grates` (how many groups have one, false for none),
-- and the flags of the features a queue may never use: `dd` (true once any job took a dedupe key),
-- `fl` (true once any job of a flow was written here), `sc` (true once any scheduler was made) and
-- `th` (true once any entry was throttled: held, or at a rate limit), `st` (true once any job
-- recorded a durable step: claims read a row's `sn` and `sw`, beats the sleepers and the waits'
-- timeouts, docs/design/steps.md), `tm` (true once any job had a timeout of its own: claims read
-- its `to`), `cx` (true while any running job's cancel is asked and its run not ended: meta `cx`
-- counts them, lua/cancel.lua and includes/end_cancelled.lua; the settles that end a run read its
-- `cx` first only then, includes/settle_cancelled.lua, and so do the reaper and extend), `xp`
-- (true once any job had an expiry: the claims and beats sweep emq:{q}:expiring only then,
-- includes/expire_due.lua), `ks` (true once any job named a concurrency key: the claims read a
-- row's `ck` and check its keys, the settles give their slots back, only then), `kr` (how many concurrency keys have a rate limit,
-- false for none: the claims and settles read a key's rate only then, includes/key_rate.lua), and `ng` (true while every
-- generated id is known new: includes/take_seq.lua). A queue that never used one
-- does not pay for it: the reads of every claimed and settled row ask for `dk`, `dt`, `fp` and
-- `fw` only under `dd` and `fl` (includes/claim_jobs.lua, held_run.lua), the beat reads the
-- outbox only under `fl`, the schedulers only under `sc` (first_slot, due_schedulers) and the
-- throttled entries only under `th` (next_due, readmit_due, admit, free_slots, group_open).
-- Each flag is set (mark_feature) before the first key or field it guards is written, and stays.
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl', 'sc', 'th', 'ng', 'st', 'tm', 'cx', 'xp', 'ks', 'kr')
    queue_meta_read = {
      paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5],
      dd = r[6] ~= false, fl = r[7] ~= false, sc = r[8] ~= false, th = r[9] ~= false, ng = r[10] ~= false, st = r[11] ~= false, tm = r[12] ~= false, cx = (tonumber(r[13]) or 0) > 0, xp = r[14] ~= false, ks = r[15] ~= false, kr = r[16] ~= false,
    }
  end
  return queue_meta_read
end

-- Set feature flag `name` ('sc' or 'th') for good, in meta and for the rest of the call, before
-- the first write of what it guards (see above); no write when it is set already.
local function mark_feature(name)
  local meta = queue_meta()
  if meta[name] then return end
  redis.call('HSET', K_META, name, '1')
  meta[name] = true
end
