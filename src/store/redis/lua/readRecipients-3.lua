--[[
  readRecipients (deliveries.ts) in one step, for the divine layout only: per user the members
  of their token set, their removal intents, their preferences, and the records of every
  candidate token (the members, then the intents' tokens). The cluster layout reads the same
  things in two rounds of one-slot calls (readRecipientSlot-3.lua per user, then
  readTokenRecords-3.lua per token shard); on one Redis they come back in one round trip, and the
  caller keeps or forgets each token exactly as those reads would have it (tokens.ts).

  The user keys cannot be declared in KEYS (their number varies), so the caller passes them,
  fully built and with its client key prefix, in ARGV. Not Redis Cluster safe: the cluster layout
  never calls it (DIVINE_LAYOUT_ONLY_SCRIPTS).

  Input:
    KEYS[1] token_to_pubkey         HASH token -> owner pubkey
    KEYS[2] token_timezone_offsets  HASH token -> minutes
    KEYS[3] token_devices           HASH token -> device JSON

    ARGV[1] and on: three keys per user (prefixed): user_tokens:{pubkey} (SET of tokens),
               user_tokens_forgetting:{pubkey} (HASH token -> intent id),
               user_preferences:{pubkey} (STRING, preferences JSON)

  Output:
    one array per user, in ARGV order: {members, intents as a flat field/value array,
    preferences JSON or false, records} where records is a flat array {owner or false, offset or
    false, deviceJson or false, ...}, one triple per candidate token: the members in their order,
    then the intents' tokens in theirs
]]
local rcall = redis.call
-- HMGET arguments per call: a user with very many tokens must not exceed Lua's unpack limit.
local CHUNK = 500

local function readRecords(tokens, records)
  for start = 1, #tokens, CHUNK do
    local chunk = { unpack(tokens, start, math.min(start + CHUNK - 1, #tokens)) }
    local owners = rcall("HMGET", KEYS[1], unpack(chunk))
    local offsets = rcall("HMGET", KEYS[2], unpack(chunk))
    local devices = rcall("HMGET", KEYS[3], unpack(chunk))
    for i = 1, #chunk do
      records[#records + 1] = owners[i]
      records[#records + 1] = offsets[i]
      records[#records + 1] = devices[i]
    end
  end
end

local out = {}
for i = 1, #ARGV, 3 do
  local members = rcall("SMEMBERS", ARGV[i])
  local intents = rcall("HGETALL", ARGV[i + 1])
  local preferences = rcall("GET", ARGV[i + 2])
  local tokens = {}
  for _, token in ipairs(members) do
    tokens[#tokens + 1] = token
  end
  for j = 1, #intents, 2 do
    tokens[#tokens + 1] = intents[j]
  end
  local records = {}
  readRecords(tokens, records)
  out[#out + 1] = { members, intents, preferences, records }
end
return out
