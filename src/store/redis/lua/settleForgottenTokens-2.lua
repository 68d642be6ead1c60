--[[
  Second half of taking tokens out of a user's set (tokens.ts, "forgetting"), after the caller
  read the tokens' records: a token the record says is the user's goes back into the set; the
  intent is deleted only if it is still the caller's (the id it read), so a later attempt's
  intent stays for that attempt. Never removes a set member.

  Input:
    KEYS[1] user_tokens:{pubkey}             SET of the user's tokens
    KEYS[2] user_tokens_forgetting:{pubkey}  HASH token -> intent id

    ARGV[1] and on: triples {token, intent id, keep} where keep is 1 when the token's record
            names this user as owner, 0 otherwise

  Output:
    how many tokens went back into the set
]]
local rcall = redis.call

local kept = 0
for i = 1, #ARGV, 3 do
  local token = ARGV[i]
  if ARGV[i + 2] == "1" then
    kept = kept + rcall("SADD", KEYS[1], token)
  end
  if rcall("HGET", KEYS[2], token) == ARGV[i + 1] then
    rcall("HDEL", KEYS[2], token)
  end
end
return kept
