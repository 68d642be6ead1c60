-- The ntfy id sequencer of the cluster layout (ntfy-cluster.ts): ids allocated and not yet
-- committed wait in a pending ZSET (score 0, so members sort by their id prefix); events of
-- appends committed behind an earlier pending id wait in a held HASH until they can be published
-- in id order. Needs `rcall`.

-- The sortable form of a position: fixed-width decimal, so string order is (ms, seq) order.
local function ntfySortKey(ms, seq)
  return string.format("%015.0f-%08.0f", ms, seq)
end

-- A pending member's fields: sort key, previous entry id ("-" for none), lease deadline (ms).
local function ntfyPendingFields(member)
  local sortKey, previous, deadline = string.match(member, "^(%S+) (%S+) (%S+)$")
  return sortKey, previous, tonumber(deadline)
end

-- Drop pending ids whose lease ran out (an appender that died between its steps) from the front,
-- then publish, in id order, every held event below the first live pending id. Returns that
-- pending member, or nil when nothing is pending.
local function ntfySettleFront(pendingKey, heldKey, now, channel)
  local front = nil
  while true do
    front = rcall("ZRANGE", pendingKey, 0, 0)[1]
    if front == nil then
      break
    end
    local _, _, deadline = ntfyPendingFields(front)
    if deadline == nil or deadline > now then
      break
    end
    rcall("ZREM", pendingKey, front)
  end
  if rcall("HLEN", heldKey) == 0 then
    return front
  end
  local frontKey = nil
  if front then
    frontKey = ntfyPendingFields(front)
  end
  local held = rcall("HKEYS", heldKey)
  table.sort(held)
  for _, sortKey in ipairs(held) do
    if frontKey and sortKey > frontKey then
      break
    end
    if channel ~= "" then
      rcall("PUBLISH", channel, rcall("HGET", heldKey, sortKey))
    end
    rcall("HDEL", heldKey, sortKey)
  end
  return front
end
