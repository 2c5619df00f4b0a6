#!/usr/bin/env bash
# pass-sim alone under wrk: the v2 poll endpoint (a pending code: GET profiles/code/{code}) and the DCR token
# endpoint (POST o/client/token), each for SECONDS; requests/s, latency, and pass-sim's CPU-µs and
# instructions per request (CPU time from /proc over the run, requests from GET /_sim/stats).
#
#   Benchmarks/pass-sim.sh [SECONDS=30] [CONNECTIONS=64]
#   NO_BUILD=1 BIN=/path/to/release Benchmarks/pass-sim.sh 20 32
#
# Environment: NO_BUILD, BIN, CONFIGURATION (as fleet.sh); WRK_THREADS (1: leaves the other core to
# pass-sim on a 2-core box); SIM_THROTTLE=1 keeps Adobe's throttle and gives every request its own
# X-Forwarded-For (so nothing is refused, but the bucket bookkeeping is paid); ENDPOINTS="poll token".
# Target (PRODUCT.md scale issue): pass-sim ≤ 60 µs CPU per request. Loopback only; bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh

seconds=${1:-30}
connections=${2:-64}
threads=${WRK_THREADS:-1}

bench_prepare curl wrk
bench_perf_check

bench_workdir pass-sim-bench

port=$(bench_free_port)
bench_start_sim "$port" "$work/sim.log"
base=http://127.0.0.1:$port
xff=
[ -n "${SIM_THROTTLE:-}" ] && xff=1

# A client, a token and a pending code, as a device would have them (docs/reference/pass-sim.md, "Try it with curl").
json() { python3 -c "import json,sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }
statement=$(cat "$work/software-statement") # issued by bench_start_sim
device_info=$(printf '{"model":"AppleTV","osName":"tvOS"}' | base64 -w0)
device_id="fingerprint $(printf bench-device-1 | base64 -w0)"
registration=$(curl -sf -X POST "$base/o/client/register" -H 'Content-Type: application/json' -H "X-Device-Info: $device_info" \
    -d "{\"software_statement\":\"$statement\"}")
client_id=$(echo "$registration" | json client_id)
client_secret=$(echo "$registration" | json client_secret)
token_body="client_id=$client_id&client_secret=$client_secret&grant_type=client_credentials"
token=$(curl -sf -X POST "$base/o/client/token" -H "X-Device-Info: $device_info" \
    -H 'Content-Type: application/x-www-form-urlencoded' -d "$token_body" | json access_token)
code=$(curl -sf -X POST "$base/api/v2/REF30/sessions" -H "Authorization: Bearer $token" -H "AP-Device-Identifier: $device_id" \
    -H "X-Device-Info: $device_info" -H 'Content-Type: application/x-www-form-urlencoded' \
    -d 'mvpd=Cablevision&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com' | json code)
check=$(curl -s -o /dev/null -w '%{http_code}' "$base/api/v2/REF30/profiles/code/$code" -H "Authorization: Bearer $token" -H "AP-Device-Identifier: $device_id")
[ "$check" = 200 ] || { echo "the poll endpoint answered $check, not 200" >&2; exit 1; }

echo "pass-sim           $([ -n "${SIM_THROTTLE:-}" ] && echo "throttle on, one X-Forwarded-For per request" || echo "--no-throttle"); wrk $threads thread(s), $connections connections, ${seconds}s per endpoint"
[ -n "${perf_ok:-}" ] || echo "instructions       n/a: $perf_why"

clk=$(bench_clk_tck)
# run NAME URL [WRK_METHOD BODY CONTENT_TYPE]: one wrk run against pass-sim, then its figures.
run() {
    local name=$1 url=$2
    local ticks0 ticks1 req0 req1 perf_pid instr out answered statuses
    ticks0=$(bench_ticks "$sim")
    req0=$(bench_sim_requests "$port")
    bench_perf_start perf_pid "$sim" "$work/perf-$name.txt"
    out=$(WRK_METHOD=${3:-GET} WRK_BODY=${4:-} WRK_CONTENT_TYPE=${5:-} XFF=$xff \
        timeout $((seconds + 30)) wrk -t "$threads" -c "$connections" -d "${seconds}s" --latency -s Benchmarks/wrk/request.lua \
        -H "Authorization: Bearer $token" -H "AP-Device-Identifier: $device_id" -H "X-Device-Info: $device_info" "$url")
    ticks1=$(bench_ticks "$sim")
    req1=$(bench_sim_requests "$port")
    instr=$(bench_perf_stop "$perf_pid" "$work/perf-$name.txt")
    answered=$((req1 - req0))
    statuses=$(curl -sf "$base/_sim/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])')
    echo "== $name: $url"
    echo "$out" | awk '/Requests\/sec|Latency +[0-9]|Non-2xx|Socket errors|requests in/ { sub(/^ +/, ""); print "   " $0 }'
    echo "   latency         $(echo "$out" | awk '/^ +(50|75|90|99)%/ { printf "p%s %s  ", substr($1, 1, length($1) - 1), $2 }')"
    echo "   pass-sim CPU    $(bench_per "$((ticks1 - ticks0))" "$answered" "1000000 / $clk") µs per request ($answered requests answered, $(python3 -c "print(f'{($ticks1 - $ticks0) / $clk / $seconds * 100:.0f}')") % of a core)"
    echo "   instructions    $(bench_per "$instr" "$answered") per request"
    echo "   answers so far  $statuses"
}

for endpoint in ${ENDPOINTS:-poll token}; do
    case $endpoint in
        poll) run poll "$base/api/v2/REF30/profiles/code/$code" ;;
        token) run token "$base/o/client/token" POST "$token_body" application/x-www-form-urlencoded ;;
        *) echo "unknown endpoint $endpoint (poll, token)" >&2; exit 2 ;;
    esac
done
