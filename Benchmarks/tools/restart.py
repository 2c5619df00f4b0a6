#!/usr/bin/env python3
"""Restart measurement run by restart.sh (Python 3, standard library): pass-sim is already running.

Starts regcoded with a fleet, waits until every device has its code, kills it, starts it again on the same
database and backend, and reports time to READY=1, re-registrations and new codes, and the spread of each
device's first poll after the restart.
"""
import argparse
import json
import os
import signal
import ssl
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--bin", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--devices", type=int, default=10000)
parser.add_argument("--interval", type=float, default=5)
parser.add_argument("--ramp", default="5s")
parser.add_argument("--onboard-timeout", type=float, default=160)
parser.add_argument("--signal", default="KILL", choices=["KILL", "TERM"])
parser.add_argument("--ca", help="pass-sim serves HTTPS with this CA (TLS=1)")
parser.add_argument("--http-version", default="1.1", choices=["1.1", "2"], help="over TLS")
args = parser.parse_args()
scheme = "https" if args.ca else "http"
context = ssl.create_default_context(cafile=args.ca) if args.ca else None

work, db_path = args.work, os.path.join(args.work, "db.sqlite")
children = []


def stop_children(*_):
    for child in children:
        if child.poll() is None:
            child.kill()
            child.wait()
    sys.exit(130)


signal.signal(signal.SIGTERM, stop_children)
signal.signal(signal.SIGINT, stop_children)


def now_ms():
    return time.time() * 1000


def sim_requests(endpoint_class):
    with urllib.request.urlopen(f"{scheme}://127.0.0.1:{args.port}/_sim/stats", timeout=10, context=context) as answer:
        by_status = json.load(answer).get("requests", {}).get(endpoint_class, {})
    return sum(n for status, n in by_status.items() if status != "dropped")


def query(sql, *parameters):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        return db.execute(sql, parameters).fetchall()
    finally:
        db.close()


def scalar(sql, *parameters):
    return query(sql, *parameters)[0][0]


with open(os.path.join(work, "regcoded.yaml"), "w") as f:
    f.write(f"backend: {scheme}://127.0.0.1:{args.port}\nlog_level: warning\nprint_codes: false\n")
    if args.ca:
        f.write(f'http_version: "{args.http_version}"\ntls:\n  ca_file: {args.ca}\n')
    if os.environ.get("EXTRA_YAML"):
        f.write(os.environ["EXTRA_YAML"].rstrip("\n") + "\n")
    f.write(f"fleets:\n  - name: bench\n    count: {args.devices}\n    ramp: {args.ramp}\n")
    # Set explicitly (a loopback backend's default is bind): as Benchmarks/lib.sh's bench_fleet_config.
    f.write(f"    client_address: {os.environ.get('CLIENT_ADDRESS', 'host')}\n")
    # The statement bench_start_sim had pass-sim issue.
    f.write(f"    software_statement_file: {os.path.join(work, 'software-statement')}\n")
    f.write(f"    poll:\n      interval: {args.interval:g}s\n")
    for line in os.environ.get("EXTRA_FLEET_YAML", "").splitlines():
        f.write(f"    {line}\n")

notify_path = os.path.join(work, "notify")
notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
notify.bind(notify_path)


def start(label):
    """Starts regcoded; returns (process, exec epoch ms, READY epoch ms)."""
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    log = open(os.path.join(work, f"daemon-{label}.log"), "w")
    t0 = now_ms()
    daemon = subprocess.Popen(
        [f"{args.bin}/regcoded", "--config", f"{work}/regcoded.yaml", "--database", db_path, "--socket", f"{work}/s.sock"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    children.append(daemon)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        notify.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            message = notify.recv(65536).decode(errors="replace")
        except socket.timeout:
            break
        if "READY=1" in message.split("\n"):
            return daemon, t0, now_ms()
    sys.exit(f"regcoded ({label}) sent no READY=1 within 120 s; see {work}/daemon-{label}.log")


daemon, t0, ready = start("first")
first_ready_s = (ready - t0) / 1000

deadline = time.monotonic() + args.onboard_timeout
with_code = 0
while time.monotonic() < deadline:
    if daemon.poll() is not None:
        sys.exit("regcoded exited during onboarding")
    with_code = scalar("SELECT count(*) FROM codes WHERE status = 'pending'")
    if with_code >= args.devices:
        break
    time.sleep(0.5)
onboarded_s = (now_ms() - t0) / 1000
time.sleep(args.interval)

before = {
    "sim_dcr": sim_requests("dcr"),
    "sim_sessions": sim_requests("sessions"),
    "registrations": scalar("SELECT count(*) FROM request_attempts WHERE stage = 'registration'"),
    "credentials": scalar("SELECT count(*) FROM client_credentials"),
    "codes": scalar("SELECT count(*) FROM codes"),
}

getattr(daemon, "kill" if args.signal == "KILL" else "terminate")()
daemon.wait()
stopped = now_ms()

daemon, t1, ready = start("restart")
restart_ready_s = (ready - t1) / 1000
# Two intervals and a margin: every device polls at least once after its restart.
time.sleep(2 * args.interval + 2)
daemon.terminate()
daemon_rc = daemon.wait(timeout=60)

after = {
    "sim_dcr": sim_requests("dcr"),
    "sim_sessions": sim_requests("sessions"),
    "registrations": scalar("SELECT count(*) FROM request_attempts WHERE stage = 'registration'"),
    "credentials": scalar("SELECT count(*) FROM client_credentials"),
    "codes": scalar("SELECT count(*) FROM codes"),
}

firsts = sorted(row[1] - ready for row in query(
    "SELECT device, min(sent_at) FROM poll_attempts WHERE sent_at >= ? GROUP BY device", int(t1)))
late = sorted(row[0] for row in query(
    "SELECT sent_at - planned_at FROM poll_attempts WHERE sent_at >= ? AND sent_at < ?", int(t1), int(ready + args.interval * 1000)))


def pct(values, q):
    return values[max(0, -(-len(values) * q // 100) - 1)] if values else float("nan")


interval_ms = args.interval * 1000
fifths = [0] * 6
for offset in firsts:
    fifths[min(5, max(0, int(offset // (interval_ms / 5))))] += 1

print(f"devices            {args.devices} (interval {args.interval:g}s, ramp {args.ramp}, SIG{args.signal} between the runs)")
print(f"first start        READY=1 after {first_ready_s:.2f} s; {with_code} devices with a code {onboarded_s:.1f} s after start")
print(f"restart            READY=1 after {restart_ready_s:.2f} s (exec → READY=1, {args.devices} stored devices; "
      f"{(t1 - stopped) / 1000:.2f} s after the old process was gone)")
print(f"registrations      simulator DCR requests {before['sim_dcr']} → {after['sim_dcr']}, "
      f"database registration requests {before['registrations']} → {after['registrations']}, "
      f"client credentials {before['credentials']} → {after['credentials']}")
print(f"codes              simulator session requests {before['sim_sessions']} → {after['sim_sessions']}, "
      f"codes in the database {before['codes']} → {after['codes']}")
same = before["sim_dcr"] == after["sim_dcr"] and before["registrations"] == after["registrations"] \
    and before["codes"] == after["codes"] and before["sim_sessions"] == after["sim_sessions"]
print(f"re-registered      {'none: no DCR request, no new code after the restart' if same else 'YES: see the counts above'}")
if firsts:
    print(f"first polls        {len(firsts)} of {args.devices} devices polled after the restart; offset from READY=1 ms: "
          f"min {pct(firsts, 0):.0f}  p50 {pct(firsts, 50):.0f}  p95 {pct(firsts, 95):.0f}  max {pct(firsts, 100):.0f}  "
          f"(spread {firsts[-1] - firsts[0]:.0f} ms over a {interval_ms:.0f} ms interval)")
    print("                   by fifth of the interval after READY=1: "
          + "  ".join(f"{n}" for n in fifths[:5]) + f"  (later: {fifths[5]})")
else:
    print("first polls        none recorded after the restart")
if late:
    print(f"lateness ms        p50 {pct(late, 50)}  p99 {pct(late, 99)}  max {pct(late, 100)} "
          f"(sent − planned, polls sent in the first interval after READY=1, n={len(late)})")
print(f"regcoded exit      {daemon_rc} (SIGTERM at the end)")
