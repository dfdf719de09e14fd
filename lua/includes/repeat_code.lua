-- @include settled_token
-- What a settle answers for a job it does not hold, from the row's `t`: when `t` is the mark this
-- settle leaves (settled_token(token, kind .. code), `code` one of `codes`), the settle already
-- ran under this token (a repeat of it: its reply was lost and the request sent again), so the code
-- it answered then; else 0, fenced off.
local function repeat_code(token, t, kind, codes)
  for _, code in ipairs(codes) do
    if t == settled_token(token, kind .. code) then return code end
  end
  return 0
end
