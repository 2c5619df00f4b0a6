#!/usr/bin/env bash
# Restart benchmark: DEVICES devices polling pass-sim; once every device has its code, regcoded is killed
# (SIGKILL) and started again on the same database and backend.
#
#   Benchmarks/restart.sh [DEVICES=10000] [INTERVAL=5]
#   NO_BUILD=1 BIN=/path/to/release Benchmarks/restart.sh 2000
#
# Environment: NO_BUILD, BIN, CONFIGURATION (as fleet.sh); SIM_THROTTLE=1 (keep pass-sim's throttle);
# KILL_SIGNAL=TERM (stop gracefully instead of SIGKILL); RAMP (default one interval); ONBOARD_TIMEOUT (s);
# EXTRA_YAML / EXTRA_FLEET_YAML (more configuration lines, as fleet.sh); TLS=1 / HTTP=2 (the wire, as fleet.sh);
# KEEP=1 keeps the work directory.
#
# Prints: time from exec to READY=1 (read from a NOTIFY_SOCKET the script owns) for the first start and the
# restart; whether any device registered again or got a new code (simulator counters and the database,
# before and after); and when each device polled first after the restart, as offsets from READY=1
# (min / p50 / p95 / max, and how many fell into each fifth of the interval). Loopback only; bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh

devices=${1:-10000}
interval=${2:-5}

bench_prepare sqlite3 curl

bench_workdir regcoded-restart

port=$(bench_free_port)
bench_start_sim "$port" "$work/sim.log"
echo "wire               $(bench_wire)"

python3 Benchmarks/tools/restart.py --bin "$bin" --work "$work" --port "$port" --devices "$devices" \
    --interval "$interval" --ramp "${RAMP:-${interval}s}" --onboard-timeout "${ONBOARD_TIMEOUT:-$((60 + devices / 100))}" \
    --signal "${KILL_SIGNAL:-KILL}" ${TLS:+--ca "$BENCH_TLS_DIR/ca.pem" --http-version "$(bench_http_version)"} &
driver=$!
bench_child "$driver"
wait "$driver"
