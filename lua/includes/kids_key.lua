-- The children hash of parent `id` (docs/design.md, "Flows"): field `<queue>|<id>` per child ->
-- its record `<token>|<kind>|<body>` (includes/child_record.lua).
local function kids_key(id)
  return PREFIX .. 'kids:' .. id
end
