-- Write a new job's row: its state, payload, attempts ('0') and created time, then its order `o`
-- and group `g` when it has them (order nil, group ''), then `rare`: nil, or a list of the
-- field-value pairs a row has only when they differ from the defaults (a priority among them).
-- The usual shape, a row with its order and no rare field, goes to HSET as arguments: a table
-- made for each row and unpacked costs about as much again as the HSET (~0.7 us a row, Redis 7).
local function write_row(key, state, payload, created, order, group, rare)
  if order and not rare then
    if group == '' then
      return redis.call('HSET', key, 's', state, 'd', payload, 'a', '0', 'c', created, 'o', order)
    end
    return redis.call('HSET', key, 's', state, 'd', payload, 'a', '0', 'c', created, 'o', order, 'g', group)
  end
  local row = { 's', state, 'd', payload, 'a', '0', 'c', created }
  if order then
    row[#row + 1] = 'o'
    row[#row + 1] = order
  end
  if group ~= '' then
    row[#row + 1] = 'g'
    row[#row + 1] = group
  end
  for _, v in ipairs(rare or {}) do row[#row + 1] = v end
  return redis.call('HSET', key, unpack(row))
end
