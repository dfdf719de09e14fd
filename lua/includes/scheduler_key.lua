-- The row of scheduler `id`: emq:{q}:scheduler:<id> (a hash, docs/design.md "Schedulers").
local function scheduler_key(id)
  return PREFIX .. 'scheduler:' .. id
end
