-- A job's steps hash (docs/design/steps.md): field `<index>` (1, 2, ...) -> the step's record as
-- JSON (includes/step_update.lua), and `ev:<event>` -> the sequence number of the last event one
-- of its waits took. Same slot as the row: it carries the queue's hash tag.
local function step_key(id)
  return PREFIX .. 'steps:' .. id
end
