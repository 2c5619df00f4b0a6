# Shared helpers of the benchmark scripts (sourced, not run).
#
# Every script: loopback only, bounded waits, every child it starts is remembered with bench_child
# and stopped by bench_cleanup (on EXIT) by its own pid.

bench_children=()

# Remembers a child pid so bench_cleanup stops it.
bench_child() { bench_children+=("$1"); }

bench_cleanup() {
    local pid
    for pid in "${bench_children[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    for pid in "${bench_children[@]:-}"; do
        [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
    done
}

# bench_need COMMAND [DEBIAN_PACKAGE]: installs the package with apt-get when the command is missing and
# we are root, else stops with a message naming it.
bench_need() {
    local command=$1 package=${2:-$1}
    command -v "$command" >/dev/null 2>&1 && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing $package (for $command)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >&2 ||
            { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >&2; }
    fi
    command -v "$command" >/dev/null 2>&1 || { echo "needs $command (Debian package $package)" >&2; exit 2; }
}

# bench_prepare COMMAND[=DEBIAN_PACKAGE]…: the start of every script: prints the machine, makes sure of the
# commands it needs (bench_need), then of the binaries (bench_binaries), so a missing tool stops it before a
# build.
bench_prepare() {
    local need
    bench_machine
    for need in "$@"; do bench_need "${need%%=*}" "${need#*=}"; done
    bench_binaries
}

# The binaries: built here unless NO_BUILD is set; BIN overrides where they are.
bench_binaries() {
    local configuration=${CONFIGURATION:-release}
    if [ -z "${NO_BUILD:-}" ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
        swift build -c "$configuration" --product regcoded >&2
        swift build -c "$configuration" --product pass-sim >&2
    fi
    if [ -n "${BIN:-}" ]; then
        bin=$BIN
    else
        export PATH="/opt/swift/usr/bin:$PATH"
        bin=$(swift build -c "$configuration" --show-bin-path)
    fi
    [ -x "$bin/regcoded" ] && [ -x "$bin/pass-sim" ] || { echo "no regcoded / pass-sim in $bin" >&2; exit 2; }
}

# The machine as the run starts: other work on the box shows in the load average.
bench_machine() {
    echo "machine            $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) at start, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    # The same build has measured twice as fast on one VM as on another: say which CPU answered.
    echo "cpu                $(awk -F': ' '/^model name/ { model = $2 } /^cpu MHz/ { mhz = $2 } END { printf "%s, %.0f MHz", model, mhz }' /proc/cpuinfo)"
}

bench_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

bench_now_ms() { date +%s%3N; }

# bench_sleep SECONDS: a sleep that a signal interrupts at once (bash runs traps only between commands,
# but does interrupt wait).
bench_sleep() {
    sleep "$1" &
    local pid=$!
    bench_child "$pid"
    wait "$pid"
}

# The wire to pass-sim: TLS=1 serves HTTPS (pass-sim terminating TLS itself, with a CA and certificate it writes
# into BENCH_TLS_DIR), HTTP=2 makes regcoded ask for HTTP/2 there (else HTTP/1.1). Plain HTTP by default.
# TLS_CONFIG=none leaves tls: and http_version out of regcoded's configuration, for an A/B against a build that
# predates them (BENCH_TLS_DIR/ca.pem must then be trusted system-wide).
BENCH_TLS_DIR=${BENCH_TLS_DIR:-${TMPDIR:-/tmp}/regcoded-bench-tls}
bench_scheme() { if [ -n "${TLS:-}" ]; then echo https; else echo http; fi; }
bench_http_version() { if [ "${HTTP:-1.1}" = 2 ]; then echo 2; else echo 1.1; fi; }
# bench_wire: "http", "https (HTTP/1.1)" or "https (HTTP/2)", for the scripts' headers.
bench_wire() { if [ -n "${TLS:-}" ]; then echo "https (HTTP/$(bench_http_version))"; else echo "http"; fi; }

# bench_curl ARGS…: curl trusting the benchmark CA when TLS is on.
bench_curl() {
    if [ -n "${TLS:-}" ]; then curl --cacert "$BENCH_TLS_DIR/ca.pem" "$@"; else curl "$@"; fi
}

# bench_start_sim PORT LOG [ARGS…]: starts pass-sim on loopback and waits (≤ 10 s) until it answers;
# sets sim (pid). SIM_THROTTLE=1 keeps Adobe's throttle, else --no-throttle; SIM_ARGS adds arguments; TLS=1 serves
# HTTPS (bench_scheme). Its statement key is $work/statement-key.pem, and $work/software-statement holds a
# statement it accepts (bench_fleet_config names it).
bench_start_sim() {
    local port=$1 log=$2
    shift 2
    local throttle=(--no-throttle) tls=()
    [ -n "${SIM_THROTTLE:-}" ] && throttle=()
    [ -n "${TLS:-}" ] && tls=(--tls-self-signed "$BENCH_TLS_DIR")
    "$bin/pass-sim" statement --statement-key "$work/statement-key.pem" --software-id regcoded-bench \
        >"$work/software-statement" 2>>"$log"
    # shellcheck disable=SC2086
    "$bin/pass-sim" --listen "127.0.0.1:$port" --statement-key "$work/statement-key.pem" "${throttle[@]}" "${tls[@]}" \
        --log-level error ${SIM_ARGS:-} "$@" >>"$log" 2>&1 &
    sim=$!
    bench_child "$sim"
    bench_wait_sim "$port" "$sim" 10 "$log"
}

# bench_wait_sim PORT PID SECONDS LOG: waits until the simulator on PORT answers; stops the run (showing the end of
# LOG) when process PID exits first or SECONDS pass.
bench_wait_sim() {
    local port=$1 pid=$2 seconds=$3 log=$4 _
    for _ in $(seq $((seconds * 10))); do
        bench_curl -sf "$(bench_scheme)://127.0.0.1:$port/_sim/stats" >/dev/null 2>&1 && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "pass-sim did not answer on port $port" >&2
    tail -20 "$log" >&2
    exit 2
}

# bench_config_head PORT: the top of a benchmark's regcoded configuration, up to its fleets: the simulator on
# PORT (over TLS with its CA, and the HTTP version, when TLS=1), log level warning, no printed codes, EXTRA_YAML's
# lines from the environment.
bench_config_head() {
    echo "backend: $(bench_scheme)://127.0.0.1:$1"
    if [ -n "${TLS:-}" ] && [ "${TLS_CONFIG:-}" != none ]; then
        echo "http_version: \"$(bench_http_version)\""
        echo "tls:"
        echo "  ca_file: $BENCH_TLS_DIR/ca.pem"
    fi
    echo "log_level: ${LOG_LEVEL:-warning}"
    echo "print_codes: false"
    if [ -n "${EXTRA_YAML:-}" ]; then printf '%s\n' "$EXTRA_YAML"; fi
    echo "fleets:"
}

# bench_fleet_config PORT DEVICES RAMP INTERVAL: regcoded's configuration for one fleet "bench" against the simulator
# on PORT (bench_config_head), with MAX_CONCURRENT, CLIENT_ADDRESS and EXTRA_FLEET_YAML from the environment.
# CLIENT_ADDRESS (default host) is set explicitly: a loopback backend's default is bind, whose connections are keyed
# by source address, so figures of different modes are not comparable.
bench_fleet_config() {
    echo "max_concurrent_requests: ${MAX_CONCURRENT:-512}"
    bench_config_head "$1"
    echo "  - name: bench"
    echo "    count: $2"
    echo "    software_statement_file: $work/software-statement"
    echo "    ramp: $3"
    echo "    client_address: ${CLIENT_ADDRESS:-host}"
    echo "    poll:"
    echo "      interval: ${4}s"
    if [ -n "${EXTRA_FLEET_YAML:-}" ]; then printf '%s\n' "$EXTRA_FLEET_YAML" | sed 's/^/    /'; fi
}

# bench_wait_codes DB DEVICES SECONDS PID LOG…: waits (≤ SECONDS) until DEVICES devices have a pending code in DB
# and sets with_code to how many have one; stops the run, showing the end of the LOGs, when the daemon PID exits.
bench_wait_codes() {
    local db=$1 devices=$2 seconds=$3 pid=$4
    shift 4
    local deadline=$(($(date +%s) + seconds))
    with_code=0
    while [ "$(date +%s)" -lt "$deadline" ]; do
        kill -0 "$pid" 2>/dev/null || { echo "regcoded exited during onboarding" >&2; tail -n 20 "$@" >&2; exit 1; }
        if [ -f "$db" ]; then
            with_code=$(bench_sql "$db" "SELECT count(*) FROM codes WHERE status = 'pending'" 2>/dev/null || echo 0)
            [ "$with_code" -ge "$devices" ] && return 0
        fi
        sleep 0.5
    done
}

# bench_sim_requests PORT [CLASS]: requests the simulator answered (every status but dropped connections),
# of one endpoint class (dcr, sessions, poll, decisions, config, other) or of all.
bench_sim_requests() {
    bench_curl -sf "$(bench_scheme)://127.0.0.1:$1/_sim/stats" | python3 -c '
import json, sys
wanted = sys.argv[1] if len(sys.argv) > 1 else None
requests = json.load(sys.stdin).get("requests", {})
print(sum(n for cls, by_status in requests.items() if wanted in (None, cls)
          for status, n in by_status.items() if status != "dropped"))' ${2:+"$2"}
}

# bench_sim_connections PORT: the connections pass-sim accepted, by wire, and its TLS handshakes (one JSON line).
bench_sim_connections() {
    bench_curl -sf "$(bench_scheme)://127.0.0.1:$1/_sim/stats" | python3 -c '
import json, sys
print(json.dumps(json.load(sys.stdin).get("connections", {}), separators=(",", ":")))'
}

# bench_ticks PID: user + system CPU time of a process (all its threads) in clock ticks.
bench_ticks() {
    # Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

bench_clk_tck() { getconf CLK_TCK; }

# bench_hwm_mb PID: peak resident set (VmHWM) in MB.
bench_hwm_mb() { awk '/^VmHWM:/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }

# Whether perf can count user-space instructions here; sets perf_ok=1 or perf_why.
bench_perf_check() {
    perf_ok=
    perf_why=
    if ! command -v perf >/dev/null 2>&1; then
        perf_why="perf not installed (Debian package linux-perf)"
        return 0
    fi
    local out
    out=$(perf stat -x, -e instructions:u -- true 2>&1 || true)
    if echo "$out" | grep -q '^[0-9][0-9]*,'; then
        perf_ok=1
    elif echo "$out" | grep -q 'not supported'; then
        perf_why="perf: instructions:u <not supported> (no hardware performance counters in this VM/container; Benchmarks/instructions.sh counts them under valgrind)"
    else
        perf_why="perf stat failed: $(echo "$out" | head -1) (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
    fi
}

# bench_perf_start VAR PID OUT: counts instructions:u of PID into OUT until bench_perf_stop; sets VAR to
# perf's pid (empty when perf cannot count).
bench_perf_start() {
    printf -v "$1" '%s' ""
    [ -n "${perf_ok:-}" ] || return 0
    perf stat -x, -e instructions:u -p "$2" -o "$3" >/dev/null 2>&1 &
    bench_child "$!"
    printf -v "$1" '%s' "$!"
}

# bench_perf_stop PERF_PID OUT: stops the count and echoes the instruction count (or nothing).
bench_perf_stop() {
    [ -n "$1" ] || return 0
    kill -INT "$1" 2>/dev/null || true
    local _
    for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    awk -F, '/instructions/ && $1 ~ /^[0-9]+$/ { print $1 }' "$2" 2>/dev/null || true
}

# bench_per COUNT_OR_EMPTY DIVISOR [SCALE]: COUNT×SCALE/DIVISOR rounded to one decimal, or n/a.
bench_per() {
    local value=$1 divisor=$2 scale=${3:-1}
    if [ -z "$value" ] || [ "$divisor" = 0 ]; then echo "n/a"; return; fi
    python3 -c "print(f'{$value * $scale / $divisor:,.1f}')"
}

# bench_sql DB SQL: a read-only query (the daemon may still be running).
bench_sql() { sqlite3 -readonly -cmd '.timeout 5000' "$1" "$2"; }

# bench_percentiles DB SQL: p50 p95 p99 max of the single numeric column SQL selects.
bench_percentiles() {
    python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5)
values = sorted(row[0] for row in db.execute(sys.argv[2]))
def pct(q):
    return values[max(0, -(-len(values) * q // 100) - 1)] if values else "n/a"
print(f"p50 {pct(50)}  p95 {pct(95)}  p99 {pct(99)}  max {pct(100)}  (n={len(values)})")
PY
}

# A work directory for this run in $work, removed on exit (kept and named with KEEP=1), with every child
# stopped on exit and on INT/TERM.
bench_workdir() {
    work=$(mktemp -d "/tmp/$1.XXXXXX")
    trap bench_finish EXIT
    trap 'exit 130' INT TERM
}
bench_finish() {
    bench_cleanup
    if [ -n "${KEEP:-}" ]; then echo "work directory     $work"; else rm -rf "$work"; fi
}
