#!/usr/bin/env python3
"""One Locust step of compare.sh (Python 3, standard library + the locust command): USERS devices against a
running pass-sim, measured over a steady window that starts one interval after every user has its code
(pass-sim has answered USERS more session requests), as fleet.sh waits for every device's code.
Prints KEY=VALUE lines: polls/s, lateness p50/p99/max of polls planned in the window, Locust's CPU-µs per
poll (its process and every child, from /proc) and pass-sim's CPU-µs per request.
"""
import argparse
import glob
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--users", type=int, required=True)
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--sim-pid", type=int)
parser.add_argument("--seconds", type=float, default=60, help="steady window")
parser.add_argument("--interval", type=float, default=5)
parser.add_argument("--spawn-rate", type=float, default=200)
parser.add_argument("--processes", type=int, default=1)
parser.add_argument("--work", required=True)
parser.add_argument("--ca", help="pass-sim serves HTTPS with this CA (TLS=1 in compare.sh); Locust checks it")
args = parser.parse_args()
scheme = "https" if args.ca else "http"
context = ssl.create_default_context(cafile=args.ca) if args.ca else None

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


def tree_ticks(root):
    """utime + stime of root and all its descendants now alive, in clock ticks."""
    parents, ticks = {}, {}
    for path in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(path) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(path.split("/")[2])
        parents[pid] = int(fields[1])
        ticks[pid] = int(fields[11]) + int(fields[12])
    members, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in members:
                members.add(pid)
                frontier.append(pid)
    return sum(ticks.get(pid, 0) for pid in members)


def ticks(pid):
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def sim_stats():
    with urllib.request.urlopen(f"{scheme}://127.0.0.1:{args.port}/_sim/stats", timeout=10, context=context) as answer:
        return json.load(answer).get("requests", {})


def sim_requests():
    return sum(n for by_status in sim_stats().values() for status, n in by_status.items() if status != "dropped")


def sim_codes():
    """Session requests pass-sim answered with a code (200) so far."""
    return sim_stats().get("sessions", {}).get("200", 0)


def pct(values, q):
    return values[max(0, -(-len(values) * q // 100) - 1)] if values else "nan"


out = os.path.join(args.work, f"locust-{args.users}-p{args.processes}")
os.makedirs(out, exist_ok=True)
spawn_s = args.users / args.spawn_rate
# Onboarding may take longer than spawning (each user makes three requests first); past this, the step is
# measured anyway and its poll rate shows the users that never got a code.
onboarding_limit = 3 * spawn_s + 60
run_time = int(onboarding_limit + args.interval + args.seconds + 30)  # Locust is stopped after the window
command = ["locust", "-f", os.path.join(os.path.dirname(os.path.abspath(__file__)), "locustfile.py"), "--headless",
           "-u", str(args.users), "-r", str(args.spawn_rate), "-t", f"{run_time}s", "--stop-timeout", "2",
           "--host", f"{scheme}://127.0.0.1:{args.port}", "--only-summary", "--loglevel", "ERROR"]
if args.processes > 1:
    command += ["--processes", str(args.processes)]
env = dict(os.environ, BENCH_OUT=out, BENCH_INTERVAL=str(args.interval), BENCH_CA=args.ca or "",
           BENCH_STATEMENT=os.path.join(args.work, "software-statement"))
log = open(os.path.join(out, "locust.log"), "w")
codes0 = sim_codes()
started = time.time()
locust = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def stop(*_):
    if locust.poll() is None:
        os.killpg(locust.pid, signal.SIGTERM)
        try:
            locust.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(locust.pid, signal.SIGKILL)
    sys.exit(130)


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)

while sim_codes() - codes0 < args.users and time.time() - started < onboarding_limit and locust.poll() is None:
    time.sleep(0.5)
onboarded_s = time.time() - started
codes = sim_codes() - codes0
time.sleep(args.interval)
w0 = time.time()
l0, s0, r0 = tree_ticks(locust.pid), ticks(args.sim_pid), sim_requests()
time.sleep(args.seconds)
w1 = time.time()
l1, s1, r1 = tree_ticks(locust.pid), ticks(args.sim_pid), sim_requests()
# SIGTERM to Locust's main process: it stops its users (and workers), which write their polls as they quit.
if locust.poll() is None:
    locust.send_signal(signal.SIGTERM)
try:
    locust.wait(timeout=60)
except subprocess.TimeoutExpired:
    os.killpg(locust.pid, signal.SIGKILL)
    locust.wait()


def group_alive():
    """True while a process of Locust's group runs (zombies do not count: no one may reap orphaned workers)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == locust.pid:
            return True
    return False


# With --processes, the workers write their polls as they quit, which can be after the main process has exited:
# read the files only once the whole process group is gone (reading earlier lost one worker's polls).
deadline = time.time() + 30
while group_alive() and time.time() < deadline:
    time.sleep(0.2)
if group_alive():
    os.killpg(locust.pid, signal.SIGKILL)
    sys.exit(f"Locust's workers did not quit; see {out}/locust.log")

records = []
for path in glob.glob(os.path.join(out, "locust-polls-*.csv")):
    with open(path) as f:
        records += [tuple(map(int, line.split(","))) for line in f]
w0_ms, w1_ms = w0 * 1000, w1 * 1000
late = sorted(sent - planned for planned, sent, _ in records if w0_ms <= planned < w1_ms)
window_polls = sum(1 for _, sent, _ in records if w0_ms <= sent < w1_ms)
ok = sum(1 for _, sent, status in records if w0_ms <= sent < w1_ms and status == 200)
print(f"users={args.users}")
print(f"processes={args.processes}")
print(f"users_with_code={codes}")
print(f"onboarding_s={onboarded_s:.1f}")
print(f"window_s={w1 - w0:.1f}")
print(f"window_polls={window_polls}")
print(f"window_polls_ok={ok}")
print(f"polls_per_s={window_polls / (w1 - w0):.1f}")
print(f"lateness_p50={pct(late, 50)}")
print(f"lateness_p99={pct(late, 99)}")
print(f"lateness_max={pct(late, 100)}")
print(f"cpu_us_per_poll={(l1 - l0) * TICK_US / window_polls:.1f}" if window_polls else "cpu_us_per_poll=n/a")
if s0 is not None and r1 > r0:
    print(f"sim_cpu_us_per_request={(s1 - s0) * TICK_US / (r1 - r0):.1f}")
print(f"locust_exit={locust.returncode}")
if not window_polls:
    sys.exit(f"no Locust poll in the window; see {out}/locust.log")
