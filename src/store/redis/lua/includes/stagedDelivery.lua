-- Included by the claim-and-enqueue scripts (not a script of its own): settling one item staged
-- by stageDeliveries-3.lua (deliveries.ts). Expects `rcall` and the queueMeta include before it,
-- and the lanes' ready sets as KEYS[1..3] (critical, normal, low), as `laneOf` indexes them.

-- Commit: the item leaves `pending` and is ready in its lane from `availableAt` (ms).
local function commitStaged(metaKey, pendingKey, id, meta, availableAt)
  meta.pendingOwner = nil
  writeMeta(metaKey, id, meta)
  rcall("ZREM", pendingKey, id)
  rcall("ZADD", KEYS[laneOf(meta)], availableAt, id)
end

-- Discard: payload, metadata and the pending entry go; the id is free again.
local function discardStaged(itemsKey, metaKey, pendingKey, id)
  rcall("ZREM", pendingKey, id)
  rcall("HDEL", itemsKey, id)
  rcall("HDEL", metaKey, id)
end
