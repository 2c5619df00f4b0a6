#!/usr/bin/env bash
# Fleet benchmark: N devices polling pass-sim for a while; reports poll lateness percentiles,
# daemon RSS and whether every request the simulator answered was recorded.
#
#   Benchmarks/fleet.sh [DEVICES=10000] [SECONDS=120] [INTERVAL=5]
#   CONFIGURATION=debug NO_BUILD=1 Benchmarks/fleet.sh 2000 60
#   NO_BUILD=1 BIN=.build-release/release Benchmarks/fleet.sh   (binaries built elsewhere)
#
# Loopback only; the run stops by itself after SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

devices=${1:-10000}
seconds=${2:-120}
interval=${3:-5}
configuration=${CONFIGURATION:-release}

if [ -z "${NO_BUILD:-}" ]; then
    swift build -c "$configuration" --product regcoded >&2
    swift build -c "$configuration" --product pass-sim >&2
fi
bin=${BIN:-$(swift build -c "$configuration" --show-bin-path)}

work=$(mktemp -d /tmp/regcoded-bench.XXXXXX)
cleanup() {
    [ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null || true
    [ -n "${sim:-}" ] && kill "$sim" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# No throttle: the bench measures the daemon's scheduling, not the simulator's bucket.
"$bin/pass-sim" --listen "127.0.0.1:$port" --no-throttle --log-level error >"$work/sim.log" 2>&1 &
sim=$!
for _ in $(seq 100); do grep -q "$port" "$work/sim.log" 2>/dev/null && break; sleep 0.1; done

cat >"$work/regcoded.yaml" <<YAML
backend: http://127.0.0.1:$port
log_level: warning
print_codes: false
max_concurrent_requests: 512
fleets:
  - name: bench
    count: $devices
    ramp: ${interval}s
    poll:
      interval: ${interval}s
YAML

start=$(date +%s%3N)
"$bin/regcoded" --config "$work/regcoded.yaml" --database "$work/db.sqlite" --socket "$work/s.sock" >"$work/daemon.log" 2>&1 &
daemon=$!
sleep "$seconds"
rss_kb=$(ps -o rss= -p "$daemon" | tr -d ' ')
cpu=$(ps -o time= -p "$daemon" | tr -d ' ')
stats=$(curl -s "http://127.0.0.1:$port/_sim/stats")
kill -TERM "$daemon"
wait "$daemon" || { echo "regcoded exited non-zero" >&2; tail -20 "$work/daemon.log" >&2; exit 1; }
daemon=

db="$work/db.sqlite"
# Steady state: skip the ramp and the first interval.
steady=$((start + (2 * interval + 2) * 1000))
pct() {
    sqlite3 "$db" "SELECT sent_at - planned_at FROM poll_attempts WHERE sent_at >= $steady ORDER BY 1
                   LIMIT 1 OFFSET (SELECT max(0, CAST(ceil(count(*) * $1) AS INTEGER) - 1) FROM poll_attempts WHERE sent_at >= $steady)"
}
polls=$(sqlite3 "$db" "SELECT count(*) FROM poll_attempts")
steady_polls=$(sqlite3 "$db" "SELECT count(*) FROM poll_attempts WHERE sent_at >= $steady")
polling=$(sqlite3 "$db" "SELECT count(*) FROM codes WHERE status = 'pending'")
sim_polls=$(python3 -c 'import json,sys; s=json.loads(sys.argv[1]); r=s.get("requests",{}).get("poll",{}); print(sum(r.values()) if isinstance(r,dict) else r)' "$stats" 2>/dev/null || echo "?")
rate=$(python3 -c "print(round($steady_polls / max(1, $seconds - 2 * $interval - 2), 1))")

cat <<REPORT
devices            $devices (interval ${interval}s, ${seconds}s run, $configuration build)
devices polling    $polling
polls recorded     $polls (steady state: $steady_polls, $rate/s)
polls answered     $sim_polls (simulator count)
lateness ms        p50 $(pct 0.50)  p95 $(pct 0.95)  p99 $(pct 0.99)  max $(pct 1.0)
regcoded RSS       $((rss_kb / 1024)) MB
regcoded CPU time  $cpu
REPORT
