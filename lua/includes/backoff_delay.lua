-- The delay before retry number `attempts` under backoff spec "<f|e>,<delayMs>,<capMs>,<jitter>":
-- fixed or exponential (delay * 2^(attempts-1)), capped, then reduced by up to `jitter` of
-- itself using `rand` in [0, 1) supplied by the caller (Lua's PRNG is not random on every host).
local function backoff_delay(spec, attempts, rand)
  local kind, base, cap, jitter = string.match(spec or '', '^(%a),(%d+),(%d+),([%d.]+)$')
  if not kind then return 0 end
  local d = tonumber(base)
  if kind == 'e' then d = d * 2 ^ math.min(attempts - 1, 52) end
  d = math.min(d, tonumber(cap))
  return math.floor(d - d * tonumber(jitter) * rand)
end
