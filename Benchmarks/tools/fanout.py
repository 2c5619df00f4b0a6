#!/usr/bin/env python3
"""Event fan-out measurement run by fanout.sh (Python 3, standard library).

Waits until the daemon's event rate is steady, connects SUBSCRIBERS clients to the Unix control socket
(JSON-RPC `subscribe`, live events only) and SSE clients to the HTTP listener (`GET /events`), and for
SECONDS records, for every event each subscriber receives, arrival time − the event's `time`. One process
and one selector loop: arrival is stamped when the bytes are read, and every ready socket is read before
any is parsed. Of the SSE streams only the first --sse-timed are parsed (the others count their events'
`id:` lines, so 1,000 streams do not need 1,000 parsers); a polling fleet's polls per minute and lateness
come from the database, and a side thread times `POST /rpc daemon.status`.
"""
import argparse
import calendar
import json
import os
import selectors
import socket
import sqlite3
import sys
import threading
import time
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--socket", required=True)
parser.add_argument("--db", required=True)
parser.add_argument("--subscribers", type=int, default=10)
parser.add_argument("--seconds", type=float, default=60)
parser.add_argument("--target", type=float, default=1000, help="events/s the fleet should produce")
parser.add_argument("--warmup-timeout", type=float, default=120)
parser.add_argument("--daemon-pid", type=int, help="sample this process's CPU time over the window")
parser.add_argument("--http", help="HOST:PORT of the daemon's HTTP listener (for --sse and the /rpc probe)")
parser.add_argument("--token-file", help="the daemon's HTTP bearer token (its generated <socket>.http-token), if it needs one")
parser.add_argument("--sse", type=int, default=0, help="event streams to open at GET /events")
parser.add_argument("--sse-timed", type=int, default=5, help="of them, how many parse every event for its delay")
parser.add_argument("--pollers", default="", help="device-name prefix of the polling fleet to report")
parser.add_argument("--poll-interval", type=float, default=5, help="that fleet's poll interval, s")
parser.add_argument("--poller-count", type=int, default=0, help="that fleet's devices")
parser.add_argument("--approve-prefix", default="", help="approve the pending codes of these devices at pass-sim")
parser.add_argument("--sim", help="pass-sim's base URL, for --approve-prefix")
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


approved = set()


def approve_pending():
    """Scripts every pending code of --approve-prefix devices to be approved now (the polling fleet's stay pending)."""
    if not args.approve_prefix:
        return
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True, timeout=5)
    try:
        codes = [row[0] for row in db.execute("SELECT code FROM codes WHERE status = 'pending' AND device LIKE ?",
                                              (args.approve_prefix + "%",))]
    except sqlite3.OperationalError:
        codes = []
    finally:
        db.close()
    for code in codes:
        if code in approved:
            continue
        request = urllib.request.Request(f"{args.sim}/_sim/codes/{code}/script", method="PUT",
                                         data=b'{"outcome":"approve","after":0}',
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=5).read()
            approved.add(code)
        except OSError:
            pass


# Warm-up: every device logged in and authorizing, i.e. the stored event rate near the target for 3 s.
start = time.monotonic()
previous, previous_at, steady_for, rate = last_seq(), time.monotonic(), 0, 0.0
while time.monotonic() - start < args.warmup_timeout:
    approve_pending()
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
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(args.socket)
        self.sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{}}\n')
        self.reset_counts(index)

    def reset_counts(self, index):
        """What every kind of subscriber counts, from nothing."""
        self.index = index
        self.buffer = b""
        self.delays = []
        self.seqs = 0
        self.gaps = 0
        self.last_seq = None
        self.cutoffs = 0
        self.subscribed = False

    def take(self, chunk, arrived_ms):
        *lines, self.buffer = (self.buffer + chunk).split(b"\n")
        for line in lines:
            message = json.loads(line)
            method = message.get("method")
            if method == "event":
                self.event(message["params"], arrived_ms)
            elif method == "cutoff":
                self.cutoffs += 1
            elif message.get("id") == 1:
                self.subscribed = "result" in message

    def event(self, params, arrived_ms):
        self.delays.append(arrived_ms - epoch_ms(params["time"]))
        seq = params["seq"]
        if self.last_seq is not None and seq != self.last_seq + 1:
            self.gaps += 1
        self.last_seq = seq
        self.seqs += 1


class EventStream(Subscriber):
    """`GET /events` over HTTP/1.1. A timed stream parses every event; the others count `id:` lines only."""

    def __init__(self, index, timed):
        self.reset_counts(index)
        self.timed = timed
        self.tail = b""
        host, port = args.http.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        head = "".join(f"{name}: {value}\r\n" for name, value in authorization.items())
        self.sock.sendall(f"GET /events HTTP/1.1\r\nHost: {args.http}\r\nAccept: text/event-stream\r\n{head}\r\n".encode())

    def take(self, chunk, arrived_ms):
        if not self.subscribed:
            head = self.buffer + chunk
            if b"\r\n\r\n" not in head:
                self.buffer = head
                return
            status, _, rest = head.partition(b"\r\n")
            self.subscribed = b" 200 " in status
            self.refused = not self.subscribed
            chunk, self.buffer = rest.split(b"\r\n\r\n", 1)[1], b""
        if b"event: cutoff" in self.tail + chunk:
            self.cutoffs += 1
        if not self.timed:
            # `id:` lines only (one per event): a count that costs nothing per event in Python.
            data = self.tail + chunk
            # Every `id:` line follows a newline (the previous event's blank line or a chunk-size line).
            self.seqs += data.count(b"\nid: ") - self.tail.count(b"\nid: ")
            self.tail = data[-5:]
            return
        # Chunked transfer encoding: a chunk holds whole events, so its size lines stand alone between them.
        *blocks, self.buffer = (self.buffer + chunk).split(b"\n\n")
        for block in blocks:
            for line in block.split(b"\n"):
                if line.startswith(b"data: ") and b'"seq"' in line:
                    self.event(json.loads(line[6:]), arrived_ms)


def pct(values, q):
    return values[max(0, -(-len(values) * q // 100) - 1)] if values else float("nan")


token = open(args.token_file).read().strip() if args.token_file else None
authorization = {"Authorization": f"Bearer {token}"} if token else {}
subscribers = [Subscriber(i) for i in range(args.subscribers)]
streams = [EventStream(i, i < args.sse_timed) for i in range(args.sse)]
selector = selectors.DefaultSelector()
for sub in subscribers + streams:
    sub.sock.setblocking(False)
    selector.register(sub.sock, selectors.EVENT_READ, sub)

rpc_times = []
rpc_failures = [0]
probing = threading.Event()


def probe_rpc():
    """`POST /rpc daemon.status` every 2 s while the window lasts: how long a control call waits."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"daemon.status"}'
    while not probing.wait(2):
        request = urllib.request.Request(f"http://{args.http}/rpc", data=body, headers={"Content-Type": "application/json", **authorization})
        began = time.monotonic()
        try:
            urllib.request.urlopen(request, timeout=30).read()
            rpc_times.append((time.monotonic() - began) * 1000)
        except OSError:
            rpc_failures[0] += 1


prober = threading.Thread(target=probe_rpc, daemon=True)
if args.http:
    prober.start()

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
            sub.closed = True
            if not isinstance(sub, EventStream):
                print(f"subscriber {sub.index}: connection closed by the daemon", file=sys.stderr)
            continue
        sub.take(chunk, arrived_ms)
window_s = time.time() - window_start
ticks1, seq1 = cpu_ticks(args.daemon_pid), last_seq()
own1 = os.times()
probing.set()
for sub in subscribers + streams:
    sub.sock.close()

print(f"warm-up            {warmup_s:.1f} s until the stored event rate was ≥ 90 % of {args.target:.0f}/s for 3 s")
print(f"window             {window_s:.1f} s, {args.subscribers} socket subscribers, {args.sse} event streams (live events, every device and name)")
own = (own1.user - own0.user + own1.system - own0.system) / window_s * 100
print(f"subscribers CPU    {own:.0f} % of a core (this process, on the same cores as the daemon)")
print("delay ms           arrival at the subscriber − the event's time field (millisecond resolution: figures carry up to 1 ms of rounding)")
every = []
for sub in subscribers + streams[:args.sse_timed]:
    delays = sorted(sub.delays)
    every.extend(delays)
    note = "" if sub.subscribed else "  NOT SUBSCRIBED"
    kind = "stream" if isinstance(sub, EventStream) else "subscriber"
    print(f"  {kind} {sub.index:2d}    {len(delays) / window_s:7.0f} events/s  p50 {pct(delays, 50):6.1f}  p99 {pct(delays, 99):6.1f}  "
          f"max {pct(delays, 100):7.1f}  gaps {sub.gaps}  cut off {sub.cutoffs}{note}")
every.sort()
received = [len(sub.delays) for sub in subscribers]
print(f"  all timed        {sum(received) / window_s:7.0f} deliveries/s  p50 {pct(every, 50):6.1f}  p99 {pct(every, 99):6.1f}  max {pct(every, 100):7.1f}")
if subscribers:
    print(f"achieved           {max(received) / window_s:.0f} events/s (target {args.target:.0f}/s), "
          f"{sum(sub.gaps for sub in subscribers)} gaps, {sum(sub.cutoffs for sub in subscribers)} cut-offs")
if streams:
    served = [s for s in streams if s.subscribed]
    refused = sum(1 for s in streams if getattr(s, "refused", False))
    per_stream = sorted(s.seqs / window_s for s in served)
    closed = sum(1 for s in served if getattr(s, "closed", False))
    print(f"event streams      {len(served)} served, {refused} refused (503), {closed} closed by the daemon, "
          f"{sum(s.cutoffs for s in served)} cutoff events")
    print(f"delivered          {sum(per_stream):.0f} events/s to all streams; per stream p50 {pct(per_stream, 50):.0f}  "
          f"min {per_stream[0] if per_stream else float('nan'):.0f}  max {pct(per_stream, 100):.0f} events/s "
          f"(stored {(seq1 - seq0) / window_s:.0f}/s)")
if args.http:
    times = sorted(rpc_times)
    print(f"/rpc daemon.status ms p50 {pct(times, 50):.0f}  max {pct(times, 100):.0f}  ({len(times)} calls, {rpc_failures[0]} failed)")
if args.pollers:
    # Polls sent inside the window (a late poll counts where it was sent); stored within a second of being sent.
    time.sleep(3)
    w0, w1 = int(window_start * 1000), int((window_start + window_s) * 1000)
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True, timeout=5)
    late = sorted(row[0] for row in db.execute(
        "SELECT sent_at - planned_at FROM poll_attempts WHERE device LIKE ? AND sent_at >= ? AND sent_at < ?",
        (args.pollers + "%", w0, w1)))
    db.close()
    expected = args.poller_count * 60 / args.poll_interval
    print(f"fleet polls        {len(late) / window_s * 60:.0f} per minute of {expected:.0f} planned "
          f"({args.poller_count} devices every {args.poll_interval:g} s)")
    print(f"poll lateness ms   p50 {pct(late, 50)}  p99 {pct(late, 99)}  max {pct(late, 100)}  (n={len(late)})")
if ticks0 is not None and seq1 > seq0:
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    print(f"regcoded CPU       {(ticks1 - ticks0) * tick_us / (seq1 - seq0):.1f} µs per event stored "
          f"({seq1 - seq0} events, {(ticks1 - ticks0) * tick_us / 1e6 / window_s * 100:.0f} % of a core; includes the devices' own work)")
