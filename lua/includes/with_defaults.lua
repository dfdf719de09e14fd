-- @include job_defaults
-- A row as HGETALL returned it (a flat field/value list), with the defaults written out for the
-- fields enqueue leaves out (`m`, `b`), so a reader of get-job or list-dead sees every field.
local function with_defaults(row)
  local has = {}
  for i = 1, #row, 2 do has[row[i]] = true end
  if not has['m'] then
    row[#row + 1] = 'm'
    row[#row + 1] = tostring(DEFAULT_MAX_ATTEMPTS)
  end
  if not has['b'] then
    row[#row + 1] = 'b'
    row[#row + 1] = DEFAULT_BACKOFF
  end
  return row
end
