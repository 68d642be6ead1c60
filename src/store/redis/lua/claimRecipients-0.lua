--[[
  Take many per-(event, recipient) delivery claims in one step, each exactly as
  claimRecipientDelivery does alone (`SET dedup:{eventId}:{recipient} owner NX EX ttl`, divine's
  claim). Entries are independent.

  The claim keys cannot be declared in KEYS (their number varies with the page), so the caller
  passes them, fully built and with its client key prefix, in ARGV. Not Redis Cluster safe.

  Input:
    KEYS: none

    ARGV[1] claim lifetime, whole seconds (> 0)
    ARGV[2] the first claim key     } two values per claim: the k-th claim's key and owner
    ARGV[3] the first claim owner   } are ARGV[2k] and ARGV[2k+1]

  Output:
    one value per claim, in order: 1 taken, 0 someone holds it
]]
local rcall = redis.call
local ttl = ARGV[1]
local out = {}
for i = 2, #ARGV, 2 do
  if rcall("SET", ARGV[i], ARGV[i + 1], "NX", "EX", ttl) then
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
