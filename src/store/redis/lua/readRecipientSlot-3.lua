--[[
  readRecipients (deliveries.ts) in the cluster layout, first round: what one user's slot holds
  for their gate state, in one call. The user's token set, their removal intents and their
  preferences share the user's tag `{u:PUBKEY}`, so one script reads all three where three
  commands (SMEMBERS, HGETALL, GET) did: a third of the commands the client builds, sends and
  parses per recipient. The second round (the candidates' records, readTokenRecords-3.lua per
  token shard) and the keep-or-forget of each token are the caller's (tokens.ts), as in the divine
  layout's readRecipients-3.lua. Read only.

  Input:
    KEYS[1] user_tokens:{u:PUBKEY}             SET of the user's tokens
    KEYS[2] user_tokens_forgetting:{u:PUBKEY}  HASH token -> removal intent id
    KEYS[3] user_preferences:{u:PUBKEY}        STRING, preferences JSON

    ARGV: none

  Output:
    {members, intents as a flat field/value array, preferences JSON or false}
]]
local rcall = redis.call
return { rcall("SMEMBERS", KEYS[1]), rcall("HGETALL", KEYS[2]), rcall("GET", KEYS[3]) }
