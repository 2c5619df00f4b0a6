#!/usr/bin/env bash
# Event fan-out benchmark: a fleet that produces about RATE events/s, SUBSCRIBERS clients on the control
# socket; per subscriber and overall, p50/p99/max of (arrival − the event's time field).
#
#   Benchmarks/fanout.sh [RATE=1000] [SECONDS=60] [SUBSCRIBERS=10]
#   NO_BUILD=1 BIN=/path/to/release Benchmarks/fanout.sh 200 30
#
# The events come from a `cycle` fleet holding its login and calling getAuthorization every second: each
# granted authorization emits two events (setToken, sendTrackingData), so RATE/2 devices make RATE
# events/s once they are logged in (pass-sim approves every code after 1 s; no throttle).
# Environment: NO_BUILD, BIN, CONFIGURATION (as fleet.sh); WARMUP_TIMEOUT (s, default 60 + devices/20);
# EXTRA_YAML (more top-level configuration lines); KEEP=1 keeps the work directory. Loopback only; bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh

rate=${1:-1000}
seconds=${2:-60}
subscribers=${3:-10}
devices=$(((rate + 1) / 2))

bench_prepare sqlite3 curl

bench_workdir regcoded-fanout

port=$(bench_free_port)
SIM_THROTTLE='' bench_start_sim "$port" "$work/sim.log" --auto-approve-after 1

{
    bench_config_head "$port"
    echo "  - name: fanout"
    echo "    count: $devices"
    echo "    software_statement_file: $work/software-statement"
    echo "    scenario: cycle"
    echo "    mvpd: Cablevision"
    echo "    ramp: 10s"
    echo "    client_address: ${CLIENT_ADDRESS:-host}"
    echo "    cycle: {hold: 1h, authorize_every: 1s, resource: REF30}"
} >"$work/regcoded.yaml"

"$bin/regcoded" --config "$work/regcoded.yaml" --database "$work/db.sqlite" --socket "$work/s.sock" >"$work/daemon.log" 2>&1 &
daemon=$!
bench_child "$daemon"
for _ in $(seq 100); do [ -S "$work/s.sock" ] && break; sleep 0.1; done
[ -S "$work/s.sock" ] || { echo "no control socket" >&2; tail -20 "$work/daemon.log" >&2; exit 1; }

echo "fleet              $devices devices, cycle scenario, getAuthorization every 1 s (2 events each) → target $rate events/s"
python3 Benchmarks/tools/fanout.py --socket "$work/s.sock" --db "$work/db.sqlite" --subscribers "$subscribers" \
    --seconds "$seconds" --target "$rate" --warmup-timeout "${WARMUP_TIMEOUT:-$((60 + devices / 20))}" --daemon-pid "$daemon" &
driver=$!
bench_child "$driver"
wait "$driver"

kill -TERM "$daemon"
rc=0
wait "$daemon" || rc=$?
echo "regcoded exit      $rc (SIGTERM at the end)"
