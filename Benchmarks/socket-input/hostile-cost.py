#!/usr/bin/env python3
"""The daemon's CPU per MB for each hostile input shape, on the control socket and over `POST /rpc`, and the fleet's
poll lateness meanwhile.

Talks to a running regcoded (`regcoded --devices N --http HOST:PORT`, embedded simulator). For each shape and
transport it sends about MEGABYTES MB of that shape from CONNECTIONS connections at once (on the socket, each
connection writes its lines back to back and then reads its answers; over HTTP, each request on a connection of its
own, as a flood of clients would), and prints the daemon's CPU seconds (utime + stime from /proc/PID/stat) per MB
sent, less what the fleet alone used in the same time, with what the daemon answered. Then the same for bodies sent
in 1-byte chunks with the token, and the poll lateness (sent - planned, from `devices.polls`) of the polls planned
while the fleet was alone and while the input arrived. Standard library only; loopback only; every wait bounded.

    Benchmarks/socket-input/hostile-cost.py --socket DIR/regcoded.sock --http http://127.0.0.1:PORT --token T
        [--megabytes 4] [--connections 8] [--phase 15] [--shapes a,b,...]
"""

import argparse
import http.client
import json
import os
import socket
import statistics
import threading
import time
import urllib.parse

TICKS = os.sysconf("SC_CLK_TCK")
MB = 1_000_000


def envelope(params, ident=1):
    return b'{"jsonrpc":"2.0","id":%d,"method":"echo","params":%s}' % (ident, params)


def listing(count, item):
    return b"[" + b",".join(item(i) for i in range(count)) + b"]"


def chain(depth):
    return b"[" * depth + b"]" * depth


# Each shape is one line (or body) of its kind; how many of it make a MB depends on its size. Refused ones are
# refused by an input limit (or the line limit) at a byte near their start; legal ones are parsed and answered.
SHAPES = {
    # The case: 33 KB lines nested 16,000 deep.
    "nesting 16000 deep": lambda: envelope(chain(16_000)),
    "nesting 500000 deep": lambda: envelope(chain(500_000)),
    "wide array": lambda: envelope(b"[" + b"0," * 499_999 + b"0]"),
    "wide object": lambda: envelope(b"{" + b",".join(b'"k%d":0' % i for i in range(90_000)) + b"}"),
    "deep-wide arrays": lambda: envelope(listing(17, lambda _: listing(1000, lambda _: chain(26)))),
    "numbers": lambda: envelope(listing(80, lambda _: listing(1000, lambda i: b"-%d.25e-3" % (i * 7919 % 100000)))),
    "long number": lambda: envelope(b"1" * 1_000_000),
    "escapes": lambda: envelope(listing(16, lambda _: b'"' + b"\\u00e9\\ud83d\\ude00\\n" * 3200 + b'"')),
    "long string": lambda: envelope(b'"' + b"\\n" * 500_000 + b'"'),
    "heaviest legal": lambda: envelope(
        b"[" + listing(600, lambda _: chain(26)) + b"," + listing(14, lambda _: b'"' + b"abcdefghij" * 6400 + b'"') + b"]"
    ),
    "over the line limit": lambda: envelope(b'"' + b"x" * 1_100_000 + b'"'),
}


class Control:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(300)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.next_id = 1000

    def call(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.sock.sendall(json.dumps(message).encode() + b"\n")
        reply = json.loads(self.reader.readline())
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
    return f"{error.get('code')} {data.get('inputLimit', '')}".strip()


def socket_lines(path, line, count, answers):
    """Writes `count` copies of `line` on one connection, then reads as many answers."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(300)
    sock.connect(path)
    reader = sock.makefile("rb")
    writer = threading.Thread(target=lambda: sock.sendall((line + b"\n") * count))
    writer.start()
    for _ in range(count):
        answer = reader.readline()
        if not answer:
            answers.append("closed")
            break
        answers.append(outcome(json.loads(answer)))
    writer.join(300)
    sock.close()


def post(url, token, body, chunk=None):
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        if chunk is None:
            connection.request("POST", "/rpc", body=body, headers=headers)
        else:
            connection.putrequest("POST", "/rpc", skip_accept_encoding=True)
            for name, value in headers.items():
                connection.putheader(name, value)
            connection.putheader("Transfer-Encoding", "chunked")
            connection.endheaders()
            wire = b"".join(b"%x\r\n%s\r\n" % (len(body[i : i + chunk]), body[i : i + chunk]) for i in range(0, len(body), chunk))
            connection.send(wire + b"0\r\n\r\n")
        response = connection.getresponse()
        payload = response.read()
    except OSError as error:
        return f"{type(error).__name__}"
    finally:
        connection.close()
    try:
        return outcome(json.loads(payload))
    except ValueError:
        return f"HTTP {response.status}"


def http_bodies(url, token, body, count, answers, chunk=None):
    for _ in range(count):
        answers.append(post(url, token, body, chunk))


def run_parallel(connections, target):
    threads = [threading.Thread(target=target, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)


def lateness(control, devices, start_ms, end_ms):
    late = []
    for device in devices:
        for poll in control.call("devices.polls", {"device": device, "limit": 1000})["polls"]:
            if start_ms <= poll["plannedAt"] < end_ms and poll.get("sentAt") is not None:
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
    parser.add_argument("--megabytes", type=float, default=4, help="MB of each shape per transport")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--phase", type=float, default=15, help="seconds of the fleet alone, measured first")
    parser.add_argument("--chunked", type=int, default=2, help="1 MiB bodies sent in 1-byte chunks (with --http)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated subset of: " + ", ".join(SHAPES))
    args = parser.parse_args()

    control = Control(args.socket)
    pid = control.call("daemon.status")["pid"]
    devices = [d["device"] for d in control.call("devices.list")["devices"]]
    print(f"daemon pid {pid}, {len(devices)} devices, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")

    quiet_start = time.time()
    cpu_start = cpu_seconds(pid)
    time.sleep(args.phase)
    quiet_end = time.time()
    quiet_rate = (cpu_seconds(pid) - cpu_start) / (quiet_end - quiet_start)
    print(f"fleet alone: {quiet_rate:.3f} CPU s/s")

    results = []
    attack_start = time.time()
    transports = ["socket"] + (["http"] if args.http else [])
    for name in args.shapes.split(","):
        line = SHAPES[name]()
        total = max(args.connections, round(args.megabytes * MB / len(line)))
        per_connection = [total // args.connections + (1 if i < total % args.connections else 0) for i in range(args.connections)]
        for transport in transports:
            answers = []
            if transport == "socket":
                target = lambda i: socket_lines(args.socket, line, per_connection[i], answers)
            else:
                target = lambda i: http_bodies(args.http, args.token, line, per_connection[i], answers)
            began, cpu_began = time.time(), cpu_seconds(pid)
            run_parallel(args.connections, target)
            elapsed = time.time() - began
            cpu = cpu_seconds(pid) - cpu_began - quiet_rate * elapsed
            sent = len(line) * total / MB
            results.append((transport, name, len(line), total, cpu * 1000 / sent, elapsed, ", ".join(sorted(set(answers)))))
            print(f"  {transport} {name}: {cpu * 1000 / sent:.2f} ms CPU per MB", flush=True)

    if args.http and args.chunked:
        body = SHAPES["escapes"]()
        answers = []
        began, cpu_began = time.time(), cpu_seconds(pid)
        run_parallel(args.chunked, lambda i: http_bodies(args.http, args.token, body, 1, answers, chunk=1))
        elapsed = time.time() - began
        cpu = cpu_seconds(pid) - cpu_began - quiet_rate * elapsed
        # Each body byte is a chunk of 6 bytes on the wire ("1\r\nX\r\n").
        wire = 6 * len(body) * args.chunked / MB
        results.append(("http, 1-byte chunks", "escapes", len(body), args.chunked, cpu * 1000 / wire, elapsed, ", ".join(sorted(set(answers)))))
        print(f"  1-byte chunks: {cpu / (len(body) * args.chunked) * 1e6:.3f} µs CPU per chunk", flush=True)
    attack_end = time.time()

    # Polls planned near the end may not be sent yet: wait out one poll interval's worth before reading.
    time.sleep(6)
    print()
    print("| transport | shape | bytes each | sent | ms CPU per MB | seconds | answers |")
    print("|---|---|---|---|---|---|---|")
    for transport, name, size, count, per_mb, elapsed, answers in results:
        print(f"| {transport} | {name} | {size:,} | {count} | {per_mb:.2f} | {elapsed:.2f} | {answers} |")
    print()
    print(f"lateness, fleet alone:       {lateness(control, devices, int(quiet_start * 1000), int(quiet_end * 1000))}")
    print(f"lateness, while input came: {lateness(control, devices, int(attack_start * 1000), int(attack_end * 1000))}")


if __name__ == "__main__":
    main()
