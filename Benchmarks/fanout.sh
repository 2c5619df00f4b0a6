#!/usr/bin/env bash
# Event fan-out benchmark: a fleet that produces about RATE events/s, SUBSCRIBERS clients on the control
# socket; per subscriber and overall, p50/p99/max of (arrival − the event's time field).
#
#   Benchmarks/fanout.sh [RATE=1000] [SECONDS=60] [SUBSCRIBERS=10]
#   NO_BUILD=1 BIN=/path/to/release Benchmarks/fanout.sh 200 30
#   SSE=1000 Benchmarks/fanout.sh 1000 60 0      # 1,000 event streams over HTTP, and a polling fleet
#
# SSE=N opens N `GET /events` streams at the daemon's HTTP listener (and, where the daemon has the setting, allows
# that many with http_max_event_streams); with it, POLLERS devices (default 50) of a second fleet keep polling a
# pending code every POLL_INTERVAL s (default 5: 600 polls a minute), and the run reports their polls per minute
# and lateness, the events delivered to the streams, and how long `POST /rpc daemon.status` takes.
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
sse=${SSE:-0}
pollers=${POLLERS:-$([ "$sse" -gt 0 ] && echo 50 || echo 0)}
poll_interval=${POLL_INTERVAL:-5}

bench_prepare sqlite3 curl

bench_workdir regcoded-fanout

port=$(bench_free_port)
if [ "$pollers" -gt 0 ]; then
    # The pollers' codes stay pending: fanout.py approves the fanout fleet's codes one by one instead.
    SIM_THROTTLE='' bench_start_sim "$port" "$work/sim.log"
else
    SIM_THROTTLE='' bench_start_sim "$port" "$work/sim.log" --auto-approve-after 1
fi
http_port=
if [ "$sse" -gt 0 ]; then http_port=$(bench_free_port); fi

{
    if [ -n "$http_port" ]; then
        echo "http: 127.0.0.1:$http_port"
        # Today's limit, when the daemon has one; a daemon without the setting serves every stream.
        if "$bin/regcoded" --help 2>&1 | grep -q -- --http-max-event-streams; then
            echo "http_max_event_streams: ${SSE_CAP:-$sse}"
        fi
    fi
    bench_config_head "$port"
    if [ "$pollers" -gt 0 ]; then
        echo "  - name: pollers"
        echo "    count: $pollers"
        echo "    software_statement_file: $work/software-statement"
        echo "    ramp: 2s"
        echo "    client_address: ${CLIENT_ADDRESS:-host}"
        echo "    poll:"
        echo "      interval: ${poll_interval}s"
    fi
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
extra=()
if [ -n "$http_port" ]; then
    extra+=(--http "127.0.0.1:$http_port" --sse "$sse")
    # A daemon that needs a token on loopback generates it beside the socket before its listener starts.
    if [ -f "$work/s.http-token" ]; then extra+=(--token-file "$work/s.http-token"); fi
fi
if [ "$pollers" -gt 0 ]; then
    echo "pollers            $pollers devices polling a pending code every $poll_interval s"
    extra+=(--pollers pollers- --poller-count "$pollers" --poll-interval "$poll_interval"
        --approve-prefix fanout- --sim "http://127.0.0.1:$port")
fi
python3 Benchmarks/tools/fanout.py --socket "$work/s.sock" --db "$work/db.sqlite" --subscribers "$subscribers" \
    --seconds "$seconds" --target "$rate" --warmup-timeout "${WARMUP_TIMEOUT:-$((60 + devices / 20))}" --daemon-pid "$daemon" \
    "${extra[@]}" &
driver=$!
bench_child "$driver"
wait "$driver"

kill -TERM "$daemon"
rc=0
wait "$daemon" || rc=$?
echo "regcoded exit      $rc (SIGTERM at the end)"
