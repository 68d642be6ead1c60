--[[
  One page of a creator's watchers, with the identity of the server that answered it, so a walk's
  cursor is only ever continued on the server that issued it (the cluster layout).

  An SSCAN cursor is a position in one server's hash table, and where a member sits there depends
  on a hash seed each redis-server process draws at start: the same set on a promoted replica (or
  on a restarted server) is laid out differently, and continuing another process's cursor there
  skips members for good. The cursor is therefore tagged with the `run_id` of the process that
  issued it; a tag that is not this process's restarts the walk from the start, and the claims
  the earlier pages took make the repeated watchers skip (no bell twice, none lost).

  Input:
    KEYS[1] notify_watchers:{creator}  the creator's watcher set

    ARGV[1] run_id the cursor was issued by; empty for an untagged cursor (the first page, or a job
            queued by a divine-layout writer), used as it is
    ARGV[2] SSCAN cursor
    ARGV[3] COUNT hint

  Output:
    { run_id, next cursor, { members… }, restarted (1 when the tag was another process's, else 0) }
]]
local rcall = redis.call
local run = string.match(rcall("INFO", "server"), "run_id:(%w+)")
local cursor = ARGV[2]
local restarted = 0
if ARGV[1] ~= "" and ARGV[1] ~= run then
  cursor = "0"
  restarted = 1
end
local page = rcall("SSCAN", KEYS[1], cursor, "COUNT", ARGV[3])
return { run, page[1], page[2], restarted }
