#!/bin/bash
# Run "$@" once the machine is quiet: at least 92 % of both cores idle over 3 s (from /proc/stat).
# A benchmark and its server share the machine's cores, so another process's work shows up as
# latency; use it under the benchmark lock:
#   flock /tmp/nostr-push-bench.lock bench/support/when-quiet.sh npm run bench:ntfy -- --store sqlite
# Gives up (exit 3) after 200 tries (10 minutes).
idle_pct() {
  read -r _ u n s i w x y z _ < /proc/stat; t1=$((u+n+s+i+w+x+y+z)); i1=$((i+w))
  sleep 3
  read -r _ u n s i w x y z _ < /proc/stat; t2=$((u+n+s+i+w+x+y+z)); i2=$((i+w))
  echo $(( 100 * (i2-i1) / (t2-t1) ))
}
for n in $(seq 1 200); do
  p=$(idle_pct)
  if [ "$p" -ge 92 ]; then echo "[quiet: ${p}% idle]" >&2; exec "$@"; fi
  echo "[waiting for a quiet machine: ${p}% idle]" >&2
done
echo "machine never quiet" >&2; exit 3
