#!/usr/bin/env bash
# Instructions per poll: regcoded and pass-sim each run under valgrind's callgrind, which counts the
# instructions they execute in a steady window. Unlike CPU time, the count does not move with the machine's
# other work, so two builds compare on it even on a busy VM without hardware performance counters.
#
#   Benchmarks/instructions.sh [DEVICES=500] [SECONDS=60] [INTERVAL=5]
#   NO_BUILD=1 BIN=/path/to/release Benchmarks/instructions.sh
#
# Environment: NO_BUILD, BIN, CONFIGURATION (as fleet.sh); MAX_CONCURRENT (default 512); EXTRA_YAML /
# EXTRA_FLEET_YAML (more configuration lines, as fleet.sh); ONBOARD_TIMEOUT (s); RESULT_FILE=F (the figures
# as KEY=VALUE lines); KEEP=1 keeps the work directory (with callgrind's files, for callgrind_annotate).
#
# Valgrind runs a process on one thread at a time and some 20–100× slower, so the fleet is small: the
# count per poll is that of a lightly loaded daemon (fewer polls share an event-loop wake-up or an SQLite
# transaction than at 50,000 devices), which is what makes it a stable yardstick between builds. Both
# processes run with instrumentation off (near native speed for valgrind) until the window, which
# `callgrind_control -i on` opens and `-d` closes. Loopback only; every wait is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh

devices=${1:-500}
seconds=${2:-60}
interval=${3:-5}
ramp=${RAMP:-${interval}s}
onboard_timeout=${ONBOARD_TIMEOUT:-$((120 + devices / 10))}

bench_prepare sqlite3 curl valgrind callgrind_control=valgrind strip=binutils cc=gcc

bench_workdir regcoded-instructions

# Valgrind 3.19 (Debian 12) cannot read the DWARF 5 the Swift 6 toolchain writes and stops at startup, so
# it gets copies without debug information; their symbol tables stay, for callgrind_annotate.
mkdir "$work/bin"
for name in regcoded pass-sim; do strip --strip-debug -o "$work/bin/$name" "$bin/$name"; done
cc -O2 -shared -fPIC -o "$work/sigsuspend-copy.so" Benchmarks/tools/sigsuspend-copy.c

# under_callgrind NAME ARGS…: runs a binary of $work/bin under callgrind with instrumentation off. Started
# with `&`, it replaces its subshell, so `$!` is valgrind's pid, which callgrind_control needs.
under_callgrind() {
    local name=$1
    shift
    LD_PRELOAD="$work/sigsuspend-copy.so" exec valgrind --tool=callgrind --instr-atstart=no --dump-instr=no \
        --callgrind-out-file="$work/callgrind.$name.%p" --log-file="$work/valgrind.$name.log" \
        "$work/bin/$name" "$@"
}

# callgrind_window_ir FILE_PREFIX PID: the instructions (Ir) of the first dump `callgrind_control -d` asked
# for (callgrind numbers dumps .1, .2, …; the file without a number is written at exit).
callgrind_window_ir() {
    [ -f "$1.$2.1" ] && awk '/^totals:/ { print $2 }' "$1.$2.1"
}

port=$(bench_free_port)
# pass-sim registers only statements signed with its key (as bench_start_sim does).
"$bin/pass-sim" statement --statement-key "$work/statement-key.pem" --software-id regcoded-bench \
    >"$work/software-statement" 2>>"$work/sim.log"
under_callgrind pass-sim --listen "127.0.0.1:$port" --statement-key "$work/statement-key.pem" --no-throttle \
    --log-level error >"$work/sim.log" 2>&1 &
sim=$!
bench_child "$sim"
bench_wait_sim "$port" "$sim" 60 "$work/valgrind.pass-sim.log"

bench_fleet_config "$port" "$devices" "$ramp" "$interval" >"$work/regcoded.yaml"

db="$work/db.sqlite"
under_callgrind regcoded --config "$work/regcoded.yaml" --database "$db" --socket "$work/s.sock" >"$work/daemon.log" 2>&1 &
daemon=$!
bench_child "$daemon"

bench_wait_codes "$db" "$devices" "$onboard_timeout" "$daemon" "$work/daemon.log" "$work/valgrind.regcoded.log"
[ "$with_code" -ge "$devices" ] || { echo "only $with_code of $devices devices had a code after ${onboard_timeout}s" >&2; exit 1; }

# One interval more, then the window: instrumentation on in both, counted from here.
bench_sleep "$interval"
callgrind_at() { callgrind_control "$@" >/dev/null 2>&1 || { echo "callgrind_control $* failed" >&2; exit 1; }; }
callgrind_at -i on "$daemon"
callgrind_at -i on "$sim"
w0=$(bench_now_ms)
s_req0=$(bench_sim_requests "$port")
bench_sleep "$seconds"
w1=$(bench_now_ms)
s_req1=$(bench_sim_requests "$port")
callgrind_at -d "$daemon"
callgrind_at -d "$sim"

kill -TERM "$daemon"
daemon_rc=0
wait "$daemon" || daemon_rc=$?

d_ir=$(callgrind_window_ir "$work/callgrind.regcoded" "$daemon")
s_ir=$(callgrind_window_ir "$work/callgrind.pass-sim" "$sim")
window_s=$(python3 -c "print(($w1 - $w0) / 1000)")
window_polls=$(bench_sql "$db" "SELECT count(*) FROM poll_attempts WHERE sent_at >= $w0 AND sent_at < $w1")
expected=$(python3 -c "print(round($devices * $window_s / $interval))")
rate=$(python3 -c "print(f'{$window_polls / $window_s:,.1f}')")
s_req=$((s_req1 - s_req0))
d_ipp=$(bench_per "$d_ir" "$window_polls")
s_ipr=$(bench_per "$s_ir" "$s_req")
kept_up=
if [ "$window_polls" -lt $((expected * 9 / 10)) ]; then
    kept_up=" — fewer than 90 % of the $expected planned: valgrind could not keep up, use fewer devices"
fi

cat <<REPORT
devices            $devices (interval ${interval}s, ramp $ramp, window ${window_s}s, under valgrind $(valgrind --version | sed 's/^valgrind-//'))
window polls       $window_polls ($rate/s)$kept_up
regcoded           ${d_ir:-n/a} instructions in the window; $d_ipp per poll
pass-sim           ${s_ir:-n/a} instructions in the window; $s_ipr per request ($s_req requests)
regcoded exit      $daemon_rc
REPORT

if [ -n "${RESULT_FILE:-}" ]; then
    cat >"$RESULT_FILE" <<RESULT
devices=$devices
window_polls=$window_polls
daemon_instructions=${d_ir:-}
daemon_instructions_per_poll=$d_ipp
sim_instructions=${s_ir:-}
sim_requests=$s_req
sim_instructions_per_request=$s_ipr
RESULT
fi
