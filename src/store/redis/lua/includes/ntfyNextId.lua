-- Included by the ntfy append scripts (not a script of its own): the message id after the newest
-- one. An id is `ms-seq`; the next is (now, 0), or, while the head is not older than now, the
-- head's ms with seq + 1, rolling over to the next ms past `maxSeq`, so ids only ever increase
-- whatever the clock does. Needs `rcall`.

local function ntfyNextId(head, now, maxSeq)
  local ms, seq = now, 0
  if head then
    local dash = string.find(head, "-", 1, true)
    local headMs = tonumber(string.sub(head, 1, dash - 1))
    local headSeq = tonumber(string.sub(head, dash + 1))
    if headMs >= now then
      ms = headMs
      seq = headSeq + 1
      if seq > maxSeq then
        ms = headMs + 1
        seq = 0
      end
    end
  end
  return ms, seq
end
