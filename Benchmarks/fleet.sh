#!/usr/bin/env bash
# Fleet benchmark: DEVICES devices polling pass-sim every INTERVAL seconds, measured over a steady window of
# SECONDS that starts one interval after every device has its code.
#
#   Benchmarks/fleet.sh [DEVICES=10000] [SECONDS=120] [INTERVAL=5]
#   NO_BUILD=1 BIN=/path/to/release Benchmarks/fleet.sh 2000 60      (binaries built elsewhere)
#
# Environment:
#   NO_BUILD=1, BIN=DIR, CONFIGURATION=debug   which binaries (default: swift build -c release here)
#   SIM_THROTTLE=1        run pass-sim with Adobe's throttle (default --no-throttle)
#   SIM_ARGS="…"          more pass-sim arguments
#   SIM_PORT=P SIM_PID=N  use a pass-sim that is already running (its CPU is sampled when SIM_PID is given)
#   TLS=1                 pass-sim serves HTTPS itself (a self-signed CA regcoded is told to trust)
#   HTTP=2                over TLS, regcoded asks for HTTP/2 (default HTTP/1.1)
#   MAX_CONCURRENT=512    regcoded's max_concurrent_requests
#   RAMP=5s               the fleet's ramp (default: one interval)
#   EXTRA_YAML="…"        more top-level lines of regcoded's configuration (e.g. "poll_index: none")
#   EXTRA_FLEET_YAML="…"  more lines of the fleet (indented by this script)
#   ONBOARD_TIMEOUT=S     longest wait for every device to have its code (default 60 + DEVICES/100)
#   RESULT_FILE=F         also write the figures as KEY=VALUE lines to F
#   KEEP=1                keep the work directory (database, logs)
#
# What it prints: the load at the start; onboarding time (daemon start → every device has a pending code);
# over the window: polls/s, lateness (sent − planned, ms) of polls planned inside it, CPU-µs and
# instructions per poll (regcoded) and per request (pass-sim); the daemon's peak RSS (VmHWM); then, after
# regcoded has stopped on SIGTERM, the polls the simulator answered versus the polls the database recorded
# over the whole run. Loopback only; every wait is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh

devices=${1:-10000}
seconds=${2:-120}
interval=${3:-5}
ramp=${RAMP:-${interval}s}
onboard_timeout=${ONBOARD_TIMEOUT:-$((60 + devices / 100))}

bench_prepare sqlite3 curl

bench_workdir regcoded-bench

if [ -n "${SIM_PORT:-}" ]; then
    port=$SIM_PORT
    sim=${SIM_PID:-}
else
    port=$(bench_free_port)
    bench_start_sim "$port" "$work/sim.log"
fi

bench_fleet_config "$port" "$devices" "$ramp" "$interval" >"$work/regcoded.yaml"

db="$work/db.sqlite"
sim_polls_before=$(bench_sim_requests "$port" poll)
start=$(bench_now_ms)
"$bin/regcoded" --config "$work/regcoded.yaml" --database "$db" --socket "$work/s.sock" >"$work/daemon.log" 2>&1 &
daemon=$!
bench_child "$daemon"

# Onboarding: until every device has its pending code (bounded).
bench_wait_codes "$db" "$devices" "$onboard_timeout" "$daemon" "$work/daemon.log"
onboarded=$(bench_now_ms)
onboarding_s=$(python3 -c "print(f'{($onboarded - $start) / 1000:.1f}')")
if [ "$with_code" -lt "$devices" ]; then
    echo "warning: only $with_code of $devices devices had a code after ${onboard_timeout}s; measuring anyway" >&2
    onboarding_s=">$onboard_timeout (timed out)"
fi

# One interval more, so every device is in its polling rhythm, then the steady window.
bench_sleep "$interval"
bench_perf_check
clk=$(bench_clk_tck)
w0=$(bench_now_ms)
d_ticks0=$(bench_ticks "$daemon")
[ -n "${sim:-}" ] && s_ticks0=$(bench_ticks "$sim")
s_req0=$(bench_sim_requests "$port")
bench_perf_start d_perf "$daemon" "$work/perf-daemon.txt"
s_perf=
[ -n "${sim:-}" ] && bench_perf_start s_perf "$sim" "$work/perf-sim.txt"
bench_sleep "$seconds"
w1=$(bench_now_ms)
d_ticks1=$(bench_ticks "$daemon")
[ -n "${sim:-}" ] && s_ticks1=$(bench_ticks "$sim")
s_req1=$(bench_sim_requests "$port")
d_instr=$(bench_perf_stop "$d_perf" "$work/perf-daemon.txt")
s_instr=
[ -n "${sim:-}" ] && s_instr=$(bench_perf_stop "$s_perf" "$work/perf-sim.txt")
hwm=$(bench_hwm_mb "$daemon")

# Stop the daemon, then count: whatever it answered late or recorded late is in by now.
kill -TERM "$daemon"
daemon_rc=0
wait "$daemon" || daemon_rc=$?
sim_polls=$(($(bench_sim_requests "$port" poll) - sim_polls_before))

window_s=$(python3 -c "print(($w1 - $w0) / 1000)")
window_polls=$(bench_sql "$db" "SELECT count(*) FROM poll_attempts WHERE sent_at >= $w0 AND sent_at < $w1")
rate=$(python3 -c "print(f'{$window_polls / $window_s:,.1f}')")
lateness=$(bench_percentiles "$db" "SELECT sent_at - planned_at FROM poll_attempts WHERE planned_at >= $w0 AND planned_at < $w1")
polls=$(bench_sql "$db" "SELECT count(*) FROM poll_attempts")
polls_answered=$(bench_sql "$db" "SELECT count(*) FROM poll_attempts WHERE http_status IS NOT NULL")
with_code_end=$(bench_sql "$db" "SELECT count(*) FROM codes WHERE status = 'pending'")
d_us=$(bench_per "$((d_ticks1 - d_ticks0))" "$window_polls" "1000000 / $clk")
d_ipp=$(bench_per "$d_instr" "$window_polls")
s_req=$((s_req1 - s_req0))
s_us=n/a
s_ipr=n/a
if [ -n "${sim:-}" ]; then
    s_us=$(bench_per "$((s_ticks1 - s_ticks0))" "$s_req" "1000000 / $clk")
    s_ipr=$(bench_per "$s_instr" "$s_req")
fi
instr_note=
[ -z "${perf_ok:-}" ] && instr_note=" ($perf_why)"
lateness_p99=$(echo "$lateness" | awk '{ print $6 }')

connections=n/a
[ -n "${sim:-}" ] && connections=$(bench_sim_connections "$port" || echo n/a)

cat <<REPORT
wire               $(bench_wire)
devices            $devices (interval ${interval}s, ramp $ramp, window ${window_s}s)
devices with code  $with_code at onboarding end, $with_code_end at stop
onboarding         ${onboarding_s} s (start → every device has a pending code)
window polls       $window_polls ($rate/s)
lateness ms        $lateness  (polls planned in the window)
regcoded RSS       $hwm MB peak (VmHWM)
regcoded CPU       $d_us µs per poll; instructions per poll $d_ipp$instr_note
pass-sim CPU       $s_us µs per request; instructions per request $s_ipr ($s_req requests in the window)
polls answered     $sim_polls (simulator count, read after regcoded stopped)
polls recorded     $polls_answered with an HTTP status, $polls rows (whole run); answered − recorded = $((sim_polls - polls_answered))
sim connections    $connections (whole run)
regcoded exit      $daemon_rc
REPORT

if [ -n "${RESULT_FILE:-}" ]; then
    cat >"$RESULT_FILE" <<RESULT
devices=$devices
with_code=$with_code
onboarding_s=$onboarding_s
window_polls=$window_polls
polls_per_s=$rate
lateness_p99=$lateness_p99
cpu_us_per_poll=$d_us
instr_per_poll=$d_ipp
rss_mb=$hwm
answered=$sim_polls
recorded=$polls_answered
RESULT
fi
