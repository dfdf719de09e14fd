-- The queue's settings a script call reads on its way, in one HMGET of meta the first time any is
-- asked for, kept for the rest of the call: `paused` (true or false), `ecap` and `erb` (the events
-- settings as stored, false when unset: includes/events_settings.lua), `rate` (the queue's rate
-- limit "limit:periodMs", false for none), `grates` (how many groups have one, false for none),
-- and the flags of the features a row may carry fields for: `dd` (true once any job took a dedupe
-- key) and `fl` (true once any job of a flow was written here). A job of a queue that never used
-- one does not pay for its fields: the reads of every claimed and settled row ask for `dk`, `dt`,
-- `fp` and `fw` only under these (includes/claim_jobs.lua, held_run.lua).
-- One read where a call that rings the doorbell, claims and writes events read three times.
-- A script that writes one of these fields writes it before its first read (resume, set-events
-- and obliterate do), or the rest of its call sees what it was.
local queue_meta_read = nil
local function queue_meta()
  if not queue_meta_read then
    local r = redis.call('HMGET', K_META, 'paused', 'ecap', 'erb', 'rate', 'grates', 'dd', 'fl')
    queue_meta_read = { paused = r[1] ~= false, ecap = r[2], erb = r[3], rate = r[4], grates = r[5], dd = r[6] ~= false, fl = r[7] ~= false }
  end
  return queue_meta_read
end
