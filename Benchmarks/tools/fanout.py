#!/usr/bin/env python3
"""Event fan-out measurement run by fanout.sh (Python 3, standard library).

Waits until the daemon's event rate is steady, connects SUBSCRIBERS clients to the Unix control socket
(JSON-RPC `subscribe`, live events only), and for SECONDS records, for every event each subscriber
receives, arrival time − the event's `time`. One process and one selector loop: arrival is stamped when
the bytes are read, and every ready socket is read before any is parsed.
"""
import argparse
import calendar
import json
import os
import selectors
import socket
import sqlite3
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--socket", required=True)
parser.add_argument("--db", required=True)
parser.add_argument("--subscribers", type=int, default=10)
parser.add_argument("--seconds", type=float, default=60)
parser.add_argument("--target", type=float, default=1000, help="events/s the fleet should produce")
parser.add_argument("--warmup-timeout", type=float, default=120)
parser.add_argument("--daemon-pid", type=int, help="sample this process's CPU time over the window")
args = parser.parse_args()


def cpu_ticks(pid):
    """utime + stime of a process, in clock ticks (None without a pid)."""
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def last_seq():
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True, timeout=5)
    try:
        return db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


# Warm-up: every device logged in and authorizing, i.e. the stored event rate near the target for 3 s.
start = time.monotonic()
previous, previous_at, steady_for, rate = last_seq(), time.monotonic(), 0, 0.0
while time.monotonic() - start < args.warmup_timeout:
    time.sleep(1)
    seq, at = last_seq(), time.monotonic()
    rate = (seq - previous) / (at - previous_at)
    previous, previous_at = seq, at
    steady_for = steady_for + 1 if rate >= 0.9 * args.target else 0
    if steady_for >= 3:
        break
else:
    print(f"warning: event rate {rate:.0f}/s after {args.warmup_timeout:.0f} s, below 90 % of {args.target:.0f}/s; measuring anyway",
          file=sys.stderr)
warmup_s = time.monotonic() - start

_second_cache = {}


def epoch_ms(stamp):
    """`2026-11-21T10:00:00.123Z` → epoch milliseconds (the daemon's stamps have millisecond resolution)."""
    head = stamp[:19]
    base = _second_cache.get(head)
    if base is None:
        base = calendar.timegm(time.strptime(head, "%Y-%m-%dT%H:%M:%S")) * 1000
        _second_cache[head] = base
    fraction = stamp[20:-1] if len(stamp) > 20 and stamp[19] == "." else ""
    return base + (int((fraction + "000")[:3]) if fraction else 0)


class Subscriber:
    def __init__(self, index):
        self.index = index
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(args.socket)
        self.sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{}}\n')
        self.buffer = b""
        self.delays = []
        self.seqs = 0
        self.gaps = 0
        self.last_seq = None
        self.cutoffs = 0
        self.subscribed = False


def pct(values, q):
    return values[max(0, -(-len(values) * q // 100) - 1)] if values else float("nan")


subscribers = [Subscriber(i) for i in range(args.subscribers)]
selector = selectors.DefaultSelector()
for sub in subscribers:
    sub.sock.setblocking(False)
    selector.register(sub.sock, selectors.EVENT_READ, sub)

ticks0, seq0 = cpu_ticks(args.daemon_pid), last_seq()
own0 = os.times()
window_start = time.time()
window_end = window_start + args.seconds
while time.time() < window_end:
    # Every ready socket is read and stamped first, then parsed: parsing one subscriber's lines must not
    # delay the stamp of the next one's.
    arrivals = []
    for key, _ in selector.select(timeout=0.5):
        sub = key.data
        try:
            chunk = sub.sock.recv(1 << 20)
        except BlockingIOError:
            continue
        arrivals.append((sub, chunk, time.time() * 1000))
    for sub, chunk, arrived_ms in arrivals:
        if not chunk:
            selector.unregister(sub.sock)
            print(f"subscriber {sub.index}: connection closed by the daemon", file=sys.stderr)
            continue
        *lines, sub.buffer = (sub.buffer + chunk).split(b"\n")
        for line in lines:
            message = json.loads(line)
            method = message.get("method")
            if method == "event":
                params = message["params"]
                sub.delays.append(arrived_ms - epoch_ms(params["time"]))
                seq = params["seq"]
                if sub.last_seq is not None and seq != sub.last_seq + 1:
                    sub.gaps += 1
                sub.last_seq = seq
            elif method == "cutoff":
                sub.cutoffs += 1
            elif message.get("id") == 1:
                sub.subscribed = "result" in message
window_s = time.time() - window_start
ticks1, seq1 = cpu_ticks(args.daemon_pid), last_seq()
own1 = os.times()
for sub in subscribers:
    sub.sock.close()

print(f"warm-up            {warmup_s:.1f} s until the stored event rate was ≥ 90 % of {args.target:.0f}/s for 3 s")
print(f"window             {window_s:.1f} s, {args.subscribers} subscribers (live events, every device and name)")
own = (own1.user - own0.user + own1.system - own0.system) / window_s * 100
print(f"subscribers CPU    {own:.0f} % of a core (this process, on the same cores as the daemon)")
print("delay ms           arrival at the subscriber − the event's time field (millisecond resolution: figures carry up to 1 ms of rounding)")
every = []
for sub in subscribers:
    delays = sorted(sub.delays)
    every.extend(delays)
    note = "" if sub.subscribed else "  NOT SUBSCRIBED"
    print(f"  subscriber {sub.index:2d}    {len(delays) / window_s:7.0f} events/s  p50 {pct(delays, 50):6.1f}  p99 {pct(delays, 99):6.1f}  "
          f"max {pct(delays, 100):7.1f}  gaps {sub.gaps}  cut off {sub.cutoffs}{note}")
every.sort()
received = [len(sub.delays) for sub in subscribers]
print(f"  all              {sum(received) / window_s:7.0f} deliveries/s  p50 {pct(every, 50):6.1f}  p99 {pct(every, 99):6.1f}  max {pct(every, 100):7.1f}")
print(f"achieved           {max(received) / window_s:.0f} events/s (target {args.target:.0f}/s), "
      f"{sum(sub.gaps for sub in subscribers)} gaps, {sum(sub.cutoffs for sub in subscribers)} cut-offs")
if ticks0 is not None and seq1 > seq0:
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    print(f"regcoded CPU       {(ticks1 - ticks0) * tick_us / (seq1 - seq0):.1f} µs per event stored "
          f"({seq1 - seq0} events, {(ticks1 - ticks0) * tick_us / 1e6 / window_s * 100:.0f} % of a core; includes the devices' own work)")
