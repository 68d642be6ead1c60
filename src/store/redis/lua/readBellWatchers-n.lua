--[[
  readBellWatchers (bell-pages.ts) in the divine layout, first round for a chunk of a fan-out
  page's watchers at once: per watcher what readBellWatcher-5.lua reads (token set, removal
  intents, preferences, the video's two coordinate records) and whether its rate window for the
  creator is open. One call for up to 500 watchers instead of a script and an EXISTS per watcher:
  those two commands per push were the fan-out's only unbatched round trips (issue 39's command
  count). The divine layout only: a call's keys span every watcher's slot, which a cluster refuses
  (the cluster layout keeps one readBellWatcher-5 per watcher). Read only.

  Input, six keys per watcher:
    KEYS[1] to KEYS[6] the first watcher's, as below with k = 0; for watcher i = 0 … n - 1, k = 6i:
    KEYS[k + 1] user_tokens:PUBKEY               SET of the watcher's tokens
    KEYS[k + 2] user_tokens_forgetting:PUBKEY    HASH token -> removal intent id
    KEYS[k + 3] user_preferences:PUBKEY          STRING, preferences JSON
    KEYS[k + 4] the watcher's typed coordinate record of the video (dedup:34236:newPost:…)
    KEYS[k + 5] divine's legacy type-less coordinate record of the video (dedup:34236:…)
    KEYS[k + 6] notify_rate:PUBKEY:CREATOR       STRING, the watcher's rate window for the creator

    ARGV: none

  Output:
    per watcher, in order, five values: {members, intents as a flat field/value array,
    preferences JSON or false, how many of the two records exist (0, 1 or 2), 1 when the rate
    window is open else 0}
]]
local rcall = redis.call
local answer = {}
for k = 0, #KEYS - 1, 6 do
  answer[#answer + 1] = rcall("SMEMBERS", KEYS[k + 1])
  answer[#answer + 1] = rcall("HGETALL", KEYS[k + 2])
  answer[#answer + 1] = rcall("GET", KEYS[k + 3])
  answer[#answer + 1] = rcall("EXISTS", KEYS[k + 4], KEYS[k + 5])
  answer[#answer + 1] = rcall("EXISTS", KEYS[k + 6])
end
return answer
