#!/usr/bin/env bash
# Locust versus regcoded against the same pass-sim on the same box, one after the other, stepping the fleet
# up: for each tool, the largest fleet in which every member gets its code and poll lateness p99 stays under
# 50 ms, and the CPU-µs per poll.
#
#   Benchmarks/locust/compare.sh [STEPS="1000 2000 5000 10000"] [SECONDS=60] [INTERVAL=5]
#   NO_BUILD=1 BIN=/path/to/release Benchmarks/locust/compare.sh "200 500" 30
#   REGCODED_STEPS="75000 80000 85000" Benchmarks/locust/compare.sh "8500 9000 9500" 30
#
# Each step: Locust (headless, one process; also --processes 2 with LOAD_PROCESSES="1 2") with USERS
# users, then regcoded (Benchmarks/fleet.sh) with as many devices, each measured over a steady window of
# SECONDS that starts one interval after every user/device is polling. A tool stops stepping up after its
# first step over the limit. Environment: NO_BUILD, BIN, CONFIGURATION (as fleet.sh); SIM_THROTTLE=1
# (pass-sim keeps Adobe's throttle; both tools send one X-Forwarded-For per device); SPAWN_RATE (Locust
# users started per second, default 200); LIMIT_MS (50); WITH_REGCODED=0 steps Locust alone (to find its limit
# between steps already measured for regcoded); REGCODED_STEPS gives regcoded fleet sizes of its own (default:
# STEPS), so one run places both limits; the steps of both lists run in ascending size, each tool's in turn, and
# the summary gives regcoded's largest holding fleet as a multiple of each Locust's. EXTRA_YAML and MAX_CONCURRENT
# reach regcoded's configuration (as in fleet.sh), e.g. EXTRA_YAML="poll_index: none". FRESH_SIM=1 starts a new
# pass-sim (same binary, same options) for each step instead of one for the whole run, so no step meets the state
# the steps before it left in the simulator. TLS=1 runs both tools over HTTPS, pass-sim terminating TLS itself with
# a self-signed CA both check (Locust's FastHttpUser speaks HTTP/1.1; HTTP=2 makes regcoded use HTTP/2). A step
# holds when every
# user or device got its code and the lateness p99 stays under LIMIT_MS. Loopback only; every step is bounded
# in time.
set -euo pipefail
cd "$(dirname "$0")/../.."
. Benchmarks/lib.sh

steps=${1:-1000 2000 5000 10000}
seconds=${2:-60}
interval=${3:-5}
limit=${LIMIT_MS:-50}
spawn_rate=${SPAWN_RATE:-200}

if ! command -v locust >/dev/null 2>&1; then
    echo "installing locust (pip)" >&2
    python3 -m pip install -q locust >&2 || { echo "needs locust (pip install locust)" >&2; exit 2; }
fi
bench_prepare sqlite3 curl
export NO_BUILD=1 BIN=$bin

bench_workdir regcoded-compare

port=$(bench_free_port)
bench_start_sim "$port" "$work/sim.log"
echo "wire               $(bench_wire) for regcoded$([ -n "${TLS:-}" ] && echo ", https (HTTP/1.1) for Locust (FastHttpUser)")"
echo "pass-sim           $([ -n "${FRESH_SIM:-}" ] && echo "a new instance for each step" || echo "one instance for every run"), $([ -n "${SIM_THROTTLE:-}" ] && echo "throttle on" || echo "--no-throttle"); steps: $steps${REGCODED_STEPS:+ (regcoded: $REGCODED_STEPS)}; window ${seconds}s; interval ${interval}s; limit p99 < ${limit} ms"

value() { awk -F= -v key="$2" '$1 == key { print $2 }' "$1"; }
rows=()
# best[TOOL]: its largest holding fleet; stopped[TOOL]: the step at which it stopped (failed or did not hold).
declare -A best stopped
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

step() { # step TOOL USERS: runs one step, appends a row, records the best passing fleet
    local tool=$1 users=$2 result=$work/$1-$2.txt
    if [ -n "${FRESH_SIM:-}" ]; then
        # Each step meets a simulator without the clients, tokens and codes of the steps before it.
        kill "$sim" 2>/dev/null || true
        wait "$sim" 2>/dev/null || true
        port=$(bench_free_port)
        bench_start_sim "$port" "$work/sim-$tool-$users.log"
    fi
    if [ "$tool" = regcoded ]; then
        SIM_PORT=$port SIM_PID=$sim RESULT_FILE=$result Benchmarks/fleet.sh "$users" "$seconds" "$interval" >"$work/fleet-$users.log" 2>&1 &
    else
        python3 Benchmarks/locust/run_step.py --users "$users" --port "$port" --sim-pid "$sim" --seconds "$seconds" \
            ${TLS:+--ca "$BENCH_TLS_DIR/ca.pem"} --interval "$interval" --spawn-rate "$spawn_rate" --processes "${tool#locust-p}" --work "$work" >"$result" 2>"$work/$tool-$users.err" &
    fi
    local driver=$!
    bench_child "$driver"
    wait "$driver" || { echo "$tool with $users failed; see $work" >&2; stopped[$tool]=$users; return 0; }
    local p99 cpu rate
    p99=$(value "$result" lateness_p99)
    cpu=$(value "$result" cpu_us_per_poll)
    rate=$(value "$result" polls_per_s)
    rows+=("$(printf '%-12s %8s %10s %10s %12s' "$tool" "$users" "$rate" "$p99" "$cpu")")
    printf '%-12s %8s users: %s polls/s, lateness p99 %s ms, %s CPU-µs per poll\n' "$tool" "$users" "$rate" "$p99" "$cpu"
    # Holding means every user or device got its code and then polled on schedule: lateness alone would pass a
    # step in which part of the fleet never started polling (a Locust still onboarding its users when the
    # window opens). (Not polls/s: users onboarded at once poll in bursts, so a window's count depends on phase.)
    coded=$(value "$result" "$([ "$tool" = regcoded ] && echo with_code || echo users_with_code)")
    if [ "${coded:-0}" -ge "$users" ] && python3 -c "import sys; sys.exit(0 if float('$p99') < $limit else 1)" 2>/dev/null; then
        best[$tool]=$users
    else
        echo "$tool with $users: does not hold (${coded:-0} with a code; needs all $users and lateness p99 < $limit ms)"
        stopped[$tool]=$users
    fi
}

# (Not LOCUST_…: Locust reads every LOCUST_* variable as one of its options.)
tools=
for processes in ${LOAD_PROCESSES:-1}; do tools="$tools locust-p$processes"; done
[ "${WITH_REGCODED:-1}" = 0 ] || tools="$tools regcoded"
regcoded_steps=${REGCODED_STEPS:-$steps}
in_list() { [[ " $2 " == *" $1 "* ]]; }
for users in $(printf '%s\n' $steps $regcoded_steps | sort -n -u); do
    for tool in $tools; do
        if [ "$tool" = regcoded ]; then in_list "$users" "$regcoded_steps" || continue; else in_list "$users" "$steps" || continue; fi
        [ -n "${stopped[$tool]:-}" ] || step "$tool" "$users"
    done
done

echo
printf '%-12s %8s %10s %10s %12s\n' tool fleet "polls/s" "p99 ms" "CPU-µs/poll"
printf '%s\n' "${rows[@]}"
echo
for tool in $tools; do
    echo "$tool: largest fleet with every member's code and lateness p99 < ${limit} ms: ${best[$tool]:-none of the steps}"
done
# The true limits lie between a tool's largest holding step and its first failing one: against a Locust that
# failed a step, regcoded's largest holding fleet over that step is the ratio this run shows for certain.
if [ -n "${best[regcoded]:-}" ]; then
    for tool in $tools; do
        [ "$tool" != regcoded ] && [ -n "${best[$tool]:-}" ] || continue
        line="$(ratio "${best[regcoded]}" "${best[$tool]}")× its largest holding fleet"
        if [ -n "${stopped[$tool]:-}" ]; then
            line="$line; at least $(ratio "${best[regcoded]}" "${stopped[$tool]}")× (it failed ${stopped[$tool]})"
        else
            line="$line (it held every step: its limit may be higher)"
        fi
        echo "regcoded versus $tool: $line"
    done
fi
