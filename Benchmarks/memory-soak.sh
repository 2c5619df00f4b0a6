#!/usr/bin/env bash
# Memory soak on the shipped defaults: DEVICES devices polling a separately started pass-sim on loopback for
# MINUTES minutes, with nothing set but the backend and the software statement — so `client_address` is its
# loopback default (`bind`: every device's connections from its own 127.128.x.y address), `write_ahead: requests`,
# the poll index on, the shared connection pool. Every minute it samples, for both processes: RSS, anonymous memory
# (RssAnon), open descriptors and threads, and the polls the simulator answered.
#
#   Benchmarks/memory-soak.sh [DEVICES=10000] [MINUTES=60] [INTERVAL=5]
#   NO_BUILD=1 BIN=/path/to/release Benchmarks/memory-soak.sh 500 3      (binaries built elsewhere)
#
# Environment:
#   NO_BUILD=1, BIN=DIR, CONFIGURATION=debug   which binaries (default: swift build -c release here)
#   SIM_THROTTLE=0        run pass-sim with --no-throttle (default: its own default, Adobe's throttle)
#   CLIENT_ADDRESS=host   set the fleet's client_address (default: not set, the daemon's default)
#   SCENARIO=cycle        the fleet's scenario (default: not set; cycle logs in, holds, authorizes, logs out)
#   RESULT_FILE=F         also write the samples as CSV to F
#   KEEP=1                keep the work directory
#
# What it prints: one line a minute, then the growth of anonymous memory per minute and per poll after the
# first WARMUP minutes (default 5, or a third of the run when shorter), fitted by least squares over the samples:
# all of it, and what lies outside SQLite's own allocations (its page caches fill up to their bound as the
# database grows; `daemon.status` reports them as storage.sqliteMemoryBytes).
# Loopback only; every wait is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh

devices=${1:-10000}
minutes=${2:-60}
interval=${3:-5}
warmup=${WARMUP:-$((minutes >= 15 ? 5 : (minutes + 2) / 3))}

bench_prepare sqlite3 curl
bench_workdir regcoded-memsoak

port=$(bench_free_port)
if [ "${SIM_THROTTLE:-1}" = 0 ]; then SIM_THROTTLE=; else SIM_THROTTLE=1; fi
bench_start_sim "$port" "$work/sim.log"

{
    bench_config_head "$port"
    echo "  - name: soak"
    echo "    count: $devices"
    echo "    software_statement_file: $work/software-statement"
    echo "    ramp: ${interval}s"
    [ -n "${CLIENT_ADDRESS:-}" ] && echo "    client_address: $CLIENT_ADDRESS"
    [ -n "${SCENARIO:-}" ] && echo "    scenario: $SCENARIO"
    echo "    poll:"
    echo "      interval: ${interval}s"
} >"$work/regcoded.yaml"

"$bin/regcoded" --config "$work/regcoded.yaml" --database "$work/db.sqlite" --socket "$work/s.sock" >"$work/daemon.log" 2>&1 &
daemon=$!
bench_child "$daemon"

# status PID FIELD: a /proc/PID/status field in kB (or a count).
status() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# SQLite's own memory in the daemon (its page caches fill up to their bound as the database grows), in kB.
sqlite_kb() {
    python3 - "$work/s.sock" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"daemon.status"}\n')
line = s.makefile("rb").readline()
print(json.loads(line)["result"]["storage"].get("sqliteMemoryBytes", 0) // 1024)
PY
}

echo "devices            $devices on the defaults ($(grep -c . "$work/regcoded.yaml") lines of configuration), ${interval}s polls, $minutes min"
echo "client_address     ${CLIENT_ADDRESS:-default (bind on loopback)}; scenario ${SCENARIO:-default}; pass-sim throttle $([ -n "$SIM_THROTTLE" ] && echo on || echo off)"
printf '%6s %10s %10s %9s %6s %7s %10s %10s %6s %7s %10s\n' min rss_kB anon_kB sqlite_kB fds threads sim_rss_kB sim_anon_kB sim_fds sim_thr polls
csv="$work/samples.csv"
echo "minute,rss_kb,anon_kb,sqlite_kb,fds,threads,sim_rss_kb,sim_anon_kb,sim_fds,sim_threads,polls" >"$csv"
for minute in $(seq 0 "$minutes"); do
    [ "$minute" = 0 ] || bench_sleep 60
    kill -0 "$daemon" 2>/dev/null || { echo "regcoded exited" >&2; tail -n 20 "$work/daemon.log" >&2; exit 1; }
    polls=$(bench_sim_requests "$port" poll)
    row="$minute,$(status "$daemon" VmRSS),$(status "$daemon" RssAnon),$(sqlite_kb 2>/dev/null || echo 0),$(fds "$daemon"),$(status "$daemon" Threads)"
    row="$row,$(status "$sim" VmRSS),$(status "$sim" RssAnon),$(fds "$sim"),$(status "$sim" Threads),$polls"
    echo "$row" >>"$csv"
    echo "$row" | awk -F, '{ printf "%6d %10d %10d %9d %6d %7d %10d %10d %6d %7d %10d\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }'
done

python3 - "$csv" "$warmup" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if int(r["minute"]) >= int(sys.argv[2])]
def slope(key):
    xs = [float(r["minute"]) for r in rows]
    ys = [float(r[key]) for r in rows]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0
if len(rows) < 2:
    print("too short a run for a slope")
    sys.exit(0)
polls_per_min = slope("polls")
for row in rows:
    row["outside_sqlite_kb"] = float(row["anon_kb"]) - float(row["sqlite_kb"])
for who, key in (("regcoded", "anon_kb"), ("regcoded − SQLite", "outside_sqlite_kb"), ("pass-sim", "sim_anon_kb")):
    per_min = slope(key)
    per_poll = per_min * 1024 / polls_per_min if polls_per_min else float("nan")
    print(f"{who:18} anonymous memory {per_min:+.1f} kB/min after minute {sys.argv[2]} "
          f"({per_poll:+.2f} bytes per poll; {polls_per_min:,.0f} polls/min); "
          f"descriptors {rows[0]['sim_fds' if who == 'pass-sim' else 'fds']} → {rows[-1]['sim_fds' if who == 'pass-sim' else 'fds']}, "
          f"threads {rows[0]['sim_threads' if who == 'pass-sim' else 'threads']} → {rows[-1]['sim_threads' if who == 'pass-sim' else 'threads']}")
PY
[ -n "${RESULT_FILE:-}" ] && cp "$csv" "$RESULT_FILE"
kill -TERM "$daemon" 2>/dev/null || true
wait "$daemon" 2>/dev/null || true
