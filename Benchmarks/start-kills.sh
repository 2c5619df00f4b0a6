#!/usr/bin/env bash
# SIGKILL-at-start benchmark: regcoded with DEVICES devices is started KILLS times on one database against one
# pass-sim (started separately, with a state file, so its records count what the backend issued) and killed
# (SIGKILL) at a random moment 0–MAX_DELAY s after the exec; after each kill the backend's registrations, codes and
# answered polls are compared with what regcoded stored (Benchmarks/tools/start_kills.py).
#
#   Benchmarks/start-kills.sh [KILLS=100] [DEVICES=50] [MAX_DELAY=0.4]
#   NO_BUILD=1 BIN=/path/to/bin Benchmarks/start-kills.sh 100 50
#
# Environment: NO_BUILD, BIN, CONFIGURATION (as fleet.sh); SEED (38); INTERVAL (poll interval, 3s);
# APPROVE (pass-sim's --auto-approve-after, 1s); KEEP=1 keeps the work directory. Loopback only; bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh

kills=${1:-100}
devices=${2:-50}
max_delay=${3:-0.4}

bench_prepare sqlite3 curl
bench_workdir regcoded-start-kills

port=$(bench_free_port)
bench_start_sim "$port" "$work/sim.log" --state "$work/sim-state.sqlite" --auto-approve-after "${APPROVE:-1s}"

python3 Benchmarks/tools/start_kills.py --bin "$bin" --work "$work" --port "$port" --sim-state "$work/sim-state.sqlite" \
    --devices "$devices" --kills "$kills" --max-delay "$max_delay" --interval "${INTERVAL:-3s}" --seed "${SEED:-38}" \
    --expect-zero-used &
driver=$!
bench_child "$driver"
wait "$driver"
