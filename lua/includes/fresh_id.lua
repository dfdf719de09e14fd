-- A generated job id: "JOB:<seq>", and in a partition of a partitioned queue (named "q~i")
-- "JOB:<seq>~<i>", so generated ids stay unique across the partitions and name their partition
-- (no caller's id holds a `~`: docs/design.md, "Partitioned queues").
local FRESH_ID_SUFFIX = string.match(PREFIX, '(~%d+)}:$') or ''
local function fresh_id(seq)
  return 'JOB:' .. string.format('%d', seq) .. FRESH_ID_SUFFIX
end
