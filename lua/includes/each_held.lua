-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index `first`, `stride` values
-- each. `fence(id, token)` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token; `act(id, held, i)`
-- settles a held job (`held` what fence returned, `i` the index of its id, its other values
-- after it) and returns its code. Returns the codes in ARGV order, 0 for each job fenced off,
-- which is left as it was. The caller runs the ids through check_kind before: the kind door's
-- errors come before any write, and act writes.
local function each_held(first, stride, fence, act)
  local codes = {}
  for i = first, #ARGV, stride do
    local id = ARGV[i]
    local held = fence(id, ARGV[i + 1])
    if held then
      codes[#codes + 1] = act(id, held, i)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end
