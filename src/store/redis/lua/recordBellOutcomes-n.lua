--[[
  recordBellBatch (bell-pages.ts) in the divine layout: the outcomes of a chunk of a fan-out
  page's watchers in one call, each as recordBellOutcome-2.lua writes one (its delivery claim
  extended or released on its owner token, its newPost coordinate record), plus the rate window
  of each delivered bell. One call for up to 500 watchers instead of a script and a SET per
  watcher. The divine layout only: a call's keys span every watcher's slot (the cluster layout
  keeps one recordBellOutcome-2 per watcher and the rate windows in the creator's slot).

  Input, three keys per watcher:
    KEYS[1] to KEYS[3] the first watcher's, as below with k = 0; for watcher i = 0 … n - 1, k = 3i:
    KEYS[k + 1] dedup:{eventId}:{recipient}                  STRING the delivery claim (owner uuid)
    KEYS[k + 2] dedup:34236:newPost:{owner}:{d}:{recipient}  STRING "1", the coordinate record
    KEYS[k + 3] notify_rate:{recipient}:{creator}            STRING "1", the rate window

    ARGV[1] claim TTL, seconds (with "extend")
    ARGV[2] rate-window TTL, seconds
    then four values per watcher i, j = 2 + 4i:
    ARGV[j + 1] what to do with the claim: "extend", "release" or "keep" (left as it is: a delivered
                bell, or a rate-limited watcher that was never claimed)
    ARGV[j + 2] the claim's owner token ("" with "keep")
    ARGV[j + 3] coordinate-record TTL, seconds, or 0 to write no record
    ARGV[j + 4] "1" to restart the rate window (a delivered bell: SET EX, never NX, as divine's
                SETEX), "0" to leave it

  Output:
    per watcher, in order: 1 the claim was extended or released (or "keep"), 0 the claim was no
    longer the caller's and was left alone (the record and window are written all the same)
]]
local rcall = redis.call
local claimTtl = ARGV[1]
local rateTtl = ARGV[2]
local answer = {}
for i = 0, #KEYS / 3 - 1 do
  local k = 3 * i
  local j = 2 + 4 * i
  local action = ARGV[j + 1]
  local done = 1
  if action ~= "keep" then
    done = 0
    if rcall("GET", KEYS[k + 1]) == ARGV[j + 2] then
      if action == "extend" then
        done = rcall("EXPIRE", KEYS[k + 1], claimTtl)
      else
        done = rcall("DEL", KEYS[k + 1])
      end
    end
  end
  if ARGV[j + 3] ~= "0" then
    rcall("SET", KEYS[k + 2], "1", "EX", ARGV[j + 3])
  end
  if ARGV[j + 4] == "1" then
    rcall("SET", KEYS[k + 3], "1", "EX", rateTtl)
  end
  answer[#answer + 1] = done
end
return answer
