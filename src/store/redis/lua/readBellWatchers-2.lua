--[[
  Read the bell gate state of many watchers of one video in one step (a fan-out page): each
  watcher's devices (as listDevices-3.lua reads them), preferences document, the video's newPost
  coordinate record (typed or divine's legacy type-less key) and bell rate window.

  The per-watcher keys cannot be declared in KEYS (their number varies with the page), so the
  caller passes them, fully built and with its client key prefix, as ARGV; nothing here builds a
  key name. Not Redis Cluster safe (single-instance Redis, like divine's notify-list script).

  Input:
    KEYS[1] token_timezone_offsets  HASH token -> minutes
    KEYS[2] token_devices           HASH token -> device JSON

    ARGV[1] and on: five keys per watcher, in page order: user_tokens:{w},
              user_preferences:{w}, dedup:34236:newPost:{owner}:{d}:{w},
              dedup:34236:{owner}:{d}:{w}, notify_rate:{w}:{owner}

  Output:
    one entry per watcher, in order: {devices, preferences, recorded, rateLimited} where devices
    is the flat {token, offset or false, deviceJson or false, ...} array, preferences the JSON
    document or false, recorded and rateLimited 1 or 0
]]
local rcall = redis.call
--- @include "devices"

local out = {}
for i = 1, #ARGV, 5 do
  local recorded = 0
  if rcall("EXISTS", ARGV[i + 2]) == 1 or rcall("EXISTS", ARGV[i + 3]) == 1 then
    recorded = 1
  end
  out[#out + 1] = { readDevices(ARGV[i], KEYS[1], KEYS[2]), rcall("GET", ARGV[i + 1]), recorded, rcall("EXISTS", ARGV[i + 4]) }
end
return out
