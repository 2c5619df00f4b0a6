#!/usr/bin/env bash
# Restart benchmark: N devices polling pass-sim are killed with SIGKILL, then regcoded starts again on
# the same database and backend; prints the time to READY=1 (read from a NOTIFY_SOCKET this script owns).
#
#   Benchmarks/restart.sh [DEVICES=10000]        (NO_BUILD=1 BIN=… to reuse binaries, as fleet.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
devices=${1:-10000}
configuration=${CONFIGURATION:-release}
if [ -z "${NO_BUILD:-}" ]; then
    swift build -c "$configuration" --product regcoded >&2
    swift build -c "$configuration" --product pass-sim >&2
fi
bin=${BIN:-$(swift build -c "$configuration" --show-bin-path)}
work=$(mktemp -d /tmp/regcoded-restart.XXXXXX)
python3 - "$bin" "$work" "$devices" <<'PY'
import os, socket, subprocess, sys, time
bin, work, devices = sys.argv[1], sys.argv[2], int(sys.argv[3])
probe = socket.socket(); probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]; probe.close()
sim = subprocess.Popen([f"{bin}/pass-sim", "--listen", f"127.0.0.1:{port}", "--no-throttle", "--log-level", "error"],
                       stdout=subprocess.DEVNULL)
time.sleep(1)
with open(f"{work}/regcoded.yaml", "w") as f:
    f.write(f"backend: http://127.0.0.1:{port}\nlog_level: error\nprint_codes: false\n"
            f"fleets:\n  - name: bench\n    count: {devices}\n    ramp: 5s\n")
notify = f"{work}/notify"
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); sock.bind(notify); sock.settimeout(120)
def start():
    env = dict(os.environ, NOTIFY_SOCKET=notify)
    t0 = time.monotonic()
    daemon = subprocess.Popen([f"{bin}/regcoded", "--config", f"{work}/regcoded.yaml", "--database", f"{work}/db.sqlite",
                               "--socket", f"{work}/s.sock"], env=env)
    while "READY=1" not in sock.recv(4096).decode():
        pass
    return daemon, time.monotonic() - t0
try:
    daemon, first = start()
    # Let the ramp finish and every device show its code.
    deadline = time.time() + 120
    while time.time() < deadline:
        out = subprocess.run(["sqlite3", f"{work}/db.sqlite", "SELECT count(*) FROM codes WHERE status='pending'"],
                             capture_output=True, text=True).stdout.strip()
        if out == str(devices):
            break
        time.sleep(1)
    time.sleep(6)
    daemon.kill(); daemon.wait()
    daemon, second = start()
    time.sleep(8)
    polled = subprocess.run(["sqlite3", f"{work}/db.sqlite",
                             "SELECT count(DISTINCT device) FROM poll_attempts WHERE sent_at > (SELECT max(sent_at) - 7000 FROM poll_attempts)"],
                            capture_output=True, text=True).stdout.strip()
    codes = subprocess.run(["sqlite3", f"{work}/db.sqlite", "SELECT count(*) FROM codes"], capture_output=True, text=True).stdout.strip()
    daemon.terminate(); daemon.wait()
    print(f"devices                 {devices}")
    print(f"first start to READY    {first:.2f} s (devices ramp in after READY)")
    print(f"restart to READY        {second:.2f} s (after SIGKILL, every device with a pending code)")
    print(f"devices polling after   {polled} (codes in the database: {codes}, i.e. no new codes)")
finally:
    sim.terminate(); sim.wait()
PY
