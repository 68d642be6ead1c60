--[[
  Write the outcome of one bell (one watcher of a fan-out page) in the watcher's slot
  (bell-pages.ts recordBellBatch): its delivery claim extended (compare-and-expire) or released
  (compare-and-delete) on its owner token, and its newPost coordinate record written.

  Input:
    KEYS[1] dedup:{eventId}:{recipient}                   STRING the delivery claim (owner uuid)
    KEYS[2] dedup:34236:newPost:{owner}:{d}:{recipient}   STRING "1", the coordinate record

    ARGV[1] what to do with the claim: "extend", "release" or "keep" (left as it is: a delivered bell,
            or a rate-limited watcher that was never claimed)
    ARGV[2] the claim's owner token ("" with "keep")
    ARGV[3] claim TTL, seconds (with "extend")
    ARGV[4] coordinate-record TTL, seconds, or 0 to write no record

  Output:
    1  the claim was extended or released (or "keep")
    0  the claim was no longer the caller's; it was left alone (the record is written all the same)
]]
local rcall = redis.call

local done = 1
if ARGV[1] ~= "keep" then
  done = 0
  if rcall("GET", KEYS[1]) == ARGV[2] then
    if ARGV[1] == "extend" then
      done = rcall("EXPIRE", KEYS[1], ARGV[3])
    else
      done = rcall("DEL", KEYS[1])
    end
  end
end
if ARGV[4] ~= "0" then
  rcall("SET", KEYS[2], "1", "EX", ARGV[4])
end
return done
