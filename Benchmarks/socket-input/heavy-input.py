#!/usr/bin/env python3
"""The fleet's poll lateness and the daemon's CPU per MB while legal but heavy requests arrive.

Talks to a running regcoded (`regcoded --devices N`, embedded simulator) over its control socket and, when given,
its `--http` listener. Three phases, each PHASE seconds or as long as its sending takes:

  1. quiet: nothing but the fleet;
  2. heavy: ROUNDS rounds of one ~1 MB line of each shape on the socket (deep-wide arrays, many members, numbers,
     escapes, long strings), each answered before the next is sent, then the same bodies over `POST /rpc`;
  3. chunked: CHUNKED bodies of ~1 MiB over `POST /rpc` in 1-byte chunks (only with --http).

It prints, per phase, the lateness (sent - planned, from `devices.polls`) of the polls planned in it: p50 / p99 /
max and how many; per shape and transport, the daemon's CPU seconds (utime + stime from /proc/PID/stat) per MB sent,
less what the fleet alone used in the same time (measured in phase 1), and what the daemon answered. Standard library
only; bounded waits; loopback only.

    Benchmarks/socket-input/heavy-input.py --socket DIR/regcoded.sock [--http http://127.0.0.1:PORT] [--token T]
        [--rounds 10] [--phase 20] [--chunked 2]
"""

import argparse
import http.client
import json
import os
import socket
import statistics
import time
import urllib.parse

TICKS = os.sysconf("SC_CLK_TCK")


def envelope(params, ident=1):
    return b'{"jsonrpc":"2.0","id":%d,"method":"echo","params":%s}' % (ident, params)


def listing(count, item):
    return b"[" + b",".join(item(i) for i in range(count)) + b"]"


def chain(depth):
    return b"[" * depth + b"]" * depth


# Each about 1 MB, within the depth (32), string (64 KiB), number (64), member and element (1,024) limits: the
# shapes that were legal before the value limit, the first being the 969 KB line of 17,000 arrays 28 deep; the
# last is legal with it too.
SHAPES = {
    "deep-wide arrays": lambda: envelope(listing(17, lambda _: listing(1000, lambda _: chain(26)))),
    "many members": lambda: envelope(
        listing(95, lambda g: b"{" + b",".join(b'"k%d":%d' % (i, i) for i in range(1000)) + b"}")
    ),
    "numbers": lambda: envelope(listing(80, lambda _: listing(1000, lambda i: b"-%d.25e-3" % (i * 7919 % 100000)))),
    "escapes": lambda: envelope(listing(16, lambda _: b'"' + b"\\u00e9\\ud83d\\ude00\\n" * 3200 + b'"')),
    "long strings": lambda: envelope(listing(16, lambda _: b'"' + b"abcdefghij" * 6400 + b'"')),
    # Within every limit, the value limit included: as many arrays as it allows, the rest long strings.
    "heaviest legal": lambda: envelope(
        b"[" + listing(600, lambda _: chain(26)) + b"," + listing(14, lambda _: b'"' + b"abcdefghij" * 6400 + b'"') + b"]"
    ),
}


class Control:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(600)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.next_id = 1000

    def raw(self, line):
        self.sock.sendall(line + b"\n")
        return json.loads(self.reader.readline())

    def call(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        reply = self.raw(json.dumps(message).encode())
        if "result" not in reply:
            raise SystemExit(f"{method} failed: {reply}")
        return reply["result"]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def outcome(reply):
    if "result" in reply:
        return "result"
    error = reply.get("error", {})
    data = error.get("data") or {}
    return f"error {error.get('code')} {data.get('inputLimit', '')}".strip()


def post(url, token, body, chunk=None):
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=900)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if chunk is None:
        connection.request("POST", "/rpc", body=body, headers=headers)
    else:
        headers["Transfer-Encoding"] = "chunked"
        connection.putrequest("POST", "/rpc", skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        # One write for the whole chunked body: the server sees as many chunks per read as fit.
        wire = b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + chunk]), body[i : i + chunk]) for i in range(0, len(body), chunk))
        connection.send(wire + b"0\r\n\r\n")
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    try:
        return json.loads(payload)
    except ValueError:
        return {"error": {"code": f"HTTP {response.status}"}}


def lateness(control, devices, start_ms, end_ms):
    late = []
    for device in devices:
        for poll in control.call("devices.polls", {"device": device, "limit": 1000})["polls"]:
            if start_ms <= poll["plannedAt"] < end_ms:
                late.append(max(0, poll["sentAt"] - poll["plannedAt"]))
    if not late:
        return "no polls"
    late.sort()
    p99 = late[min(len(late) - 1, int(len(late) * 0.99))]
    return f"p50 {statistics.median(late):.0f} / p99 {p99} / max {late[-1]} ms over {len(late)} polls"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--http", help="the daemon's --http listener, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--phase", type=float, default=20)
    parser.add_argument("--chunked", type=int, default=2, help="1-byte-chunked bodies to send over HTTP")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated subset of: " + ", ".join(SHAPES))
    args = parser.parse_args()

    control = Control(args.socket)
    status = control.call("daemon.status")
    pid = status["pid"]
    devices = [d["device"] for d in control.call("devices.list")["devices"]]
    print(f"daemon pid {pid}, {len(devices)} devices, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")

    phases = []
    start = time.time()
    cpu_start = cpu_seconds(pid)
    time.sleep(args.phase)
    quiet_rate = (cpu_seconds(pid) - cpu_start) / (time.time() - start)
    phases.append(("quiet", start, time.time()))
    print(f"fleet alone: {quiet_rate:.3f} CPU s/s")

    start = time.time()
    bodies = {name: SHAPES[name]() for name in args.shapes.split(",")}
    heavy = Control(args.socket)
    transports = [("socket", lambda body: heavy.raw(body))]
    if args.http:
        transports.append(("http", lambda body: post(args.http, args.token, body)))
    results = []
    for transport, send in transports:
        for name, body in bodies.items():
            began, cpu_began = time.time(), cpu_seconds(pid)
            answers = {outcome(send(body)) for _ in range(args.rounds)}
            elapsed = time.time() - began
            cpu = cpu_seconds(pid) - cpu_began - quiet_rate * elapsed
            megabytes = len(body) * args.rounds / 1e6
            results.append((transport, name, len(body), cpu / megabytes, elapsed, ", ".join(sorted(answers))))
    while time.time() - start < args.phase:
        time.sleep(0.5)
    phases.append(("heavy", start, time.time()))

    if args.http and args.chunked:
        start = time.time()
        body = bodies.get("long strings", SHAPES["long strings"]())
        began, cpu_began = time.time(), cpu_seconds(pid)
        answers = {outcome(post(args.http, args.token, body, chunk=1)) for _ in range(args.chunked)}
        elapsed = time.time() - began
        cpu = cpu_seconds(pid) - cpu_began - quiet_rate * elapsed
        per_chunk_us = cpu / (len(body) * args.chunked) * 1e6
        results.append(("http 1-byte chunks", "long strings", len(body), cpu / (len(body) * args.chunked / 1e6), elapsed, ", ".join(sorted(answers))))
        print(f"1-byte chunks: {per_chunk_us:.2f} µs CPU per chunk")
        while time.time() - start < args.phase:
            time.sleep(0.5)
        phases.append(("chunked", start, time.time()))

    # Polls planned near a phase's end may not be sent yet: wait out one poll interval's worth before reading.
    time.sleep(6)
    print()
    print("| transport | shape | bytes | CPU s per MB | seconds | answers |")
    print("|---|---|---|---|---|---|")
    for transport, name, size, per_mb, elapsed, answers in results:
        print(f"| {transport} | {name} | {size:,} | {per_mb:.4f} | {elapsed:.2f} | {answers} |")
    print()
    for name, began, ended in phases:
        print(f"lateness {name:8s}: {lateness(control, devices, int(began * 1000), int(ended * 1000))}")


if __name__ == "__main__":
    main()
