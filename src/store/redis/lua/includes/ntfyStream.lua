-- Included by the ntfy expiry scripts (not a script of its own): reading a topic stream's entries,
-- each `m` content JSON and `x` expiry ms.

-- The expiry (ms) of a stream entry's field list, or nil when it has none readable (a damaged
-- entry, reclaimed like an expired one).
local function ntfyEntryExpiry(fields)
  for i = 1, #fields, 2 do
    if fields[i] == "x" then
      return tonumber(fields[i + 1])
    end
  end
  return nil
end
