--[[
  First half of taking tokens out of a user's set (tokens.ts, "forgetting"): move each token that
  is in the set to the user's intent hash under this attempt's id. Readers list intent tokens
  like set members (still checked against the token record), so a crash before the second half
  (settleForgottenTokens-2.lua) hides nothing; the second half puts a token back when the record
  says it is the user's after all.

  Input:
    KEYS[1] user_tokens:{pubkey}             SET of the user's tokens
    KEYS[2] user_tokens_forgetting:{pubkey}  HASH token -> intent id

    ARGV[1] intent id (unique per attempt)
    ARGV[2] and on: the tokens

  Output:
    the tokens moved (those that were in the set), in ARGV order
]]
local rcall = redis.call

local moved = {}
for i = 2, #ARGV do
  if rcall("SREM", KEYS[1], ARGV[i]) == 1 then
    rcall("HSET", KEYS[2], ARGV[i], ARGV[1])
    moved[#moved + 1] = ARGV[i]
  end
end
return moved
