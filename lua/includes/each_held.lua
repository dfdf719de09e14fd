-- The fence over a batch: walk ARGV's (id, token, ...) tuples from index `first`, `stride` values
-- each. `fence(id, token)` (hold, or held_group when the settle needs only the group) reads what
-- the settle needs of the row, nil unless the job is active under that token (then the row's state
-- and `t` after it); `act(id, held, i)` settles a held job (`held` what fence returned, `i` the index
-- of its id, its other values after it) and returns its code. A job not held is left as it was:
-- its code is `again(token, state, t)` (nil for a settle without one: 0), the code a repeat of
-- this settle answers when the row shows it already ran under that token (its reply was lost and
-- the request sent again), else 0, fenced off. A job whose run under that token ended cancelled
-- (its `t` is `<token>/x`: includes/end_cancelled.lua) answers CANCELLED_CODE, whatever the settle.
-- `ends(id, token)` (includes/settle_cancelled.lua, for a settle that ends the run: complete,
-- retry, fail, release, suspend; nil for the others) goes first, and ends a run whose cancel was
-- asked. Returns the codes in ARGV order. The caller runs the ids through check_kind before: the
-- kind door's errors come before any write, and act writes.
local CANCELLED_CODE = 9
local function each_held(first, stride, fence, act, again, ends)
  local codes = {}
  for i = first, #ARGV, stride do
    local id, token = ARGV[i], ARGV[i + 1]
    if ends then ends(id, token) end
    local held, state, t = fence(id, token)
    if held then
      codes[#codes + 1] = act(id, held, i)
    elseif state == 'cancelled' and t == token .. '/x' then
      codes[#codes + 1] = CANCELLED_CODE
    elseif again then
      codes[#codes + 1] = again(token, state, t)
    else
      codes[#codes + 1] = 0
    end
  end
  return codes
end
