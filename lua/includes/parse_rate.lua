-- A stored rate limit, "limit:periodMs", as two numbers; nil for none (nil or false) or anything else.
local function parse_rate(spec)
  local limit, period = string.match(spec or '', '^(%d+):(%d+)$')
  if not limit then return nil end
  return tonumber(limit), tonumber(period)
end
