-- A generated job id: "JOB:<seq>", and in a partition of a partitioned queue (named "q~i")
-- "JOB:<seq>~<i>", so generated ids stay unique across the partitions and name their partition
-- (no caller's id holds a `~`: docs/design.md, "Partitioned queues").
-- A plain find first: the pattern match on every call of every script that includes this cost a
-- single add 11k of its instructions (callgrind), and only a partition's prefix has a `~`.
local FRESH_ID_SUFFIX = string.find(PREFIX, '~', 1, true) and string.match(PREFIX, '(~%d+)}:$') or ''
local function fresh_id(seq)
  return 'JOB:' .. string.format('%d', seq) .. FRESH_ID_SUFFIX
end
