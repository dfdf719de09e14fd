-- @include job_defaults
-- A new row's fields that it has only when they differ from the defaults: `m` max attempts, `b`
-- the backoff spec (both text, as enqueue takes them), `p` the priority (a number, > 0), `x` the
-- traceparent (nil for none), `fp` a flow child's parent (nil for none), as a flat field-value
-- list, or nil when it has none (the usual row: write_row then passes its fields as arguments).
local function rare_fields(max_attempts, backoff, priority, traceparent, parent)
  local rare = nil
  if tonumber(max_attempts) ~= DEFAULT_MAX_ATTEMPTS then rare = { 'm', max_attempts } end
  if backoff ~= DEFAULT_BACKOFF then
    rare = rare or {}
    rare[#rare + 1] = 'b'
    rare[#rare + 1] = backoff
  end
  if priority > 0 then
    rare = rare or {}
    rare[#rare + 1] = 'p'
    rare[#rare + 1] = string.format('%d', priority)
  end
  if traceparent then
    rare = rare or {}
    rare[#rare + 1] = 'x'
    rare[#rare + 1] = traceparent
  end
  if parent then
    rare = rare or {}
    rare[#rare + 1] = 'fp'
    rare[#rare + 1] = parent
  end
  return rare
end
