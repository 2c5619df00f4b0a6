#!/usr/bin/env python3
"""Probe latency of a normal control call while another client sends nesting bombs.

Talks to a running regcoded's control socket (JSON-RPC 2.0, one object per line). One probe client calls
`daemon.status` back to back; first alone (baseline), then while an attacker connection sends BOMBS lines of
DEPTH nested arrays (about 2 x DEPTH bytes each) and reads their replies. Prints p50/p99/max of the probe's
round trips for both phases, and how long the attacker waited for all its replies.

    Benchmarks/socket-input/nesting-bomb.py --socket ./regcoded.sock [--bombs 20] [--depth 512] [--probes 200]

Standard library only; the daemon must accept this user on its socket.
"""

import argparse
import json
import socket
import statistics
import threading
import time


def connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    return sock, sock.makefile("rb")


def probe(path, count, stop=None):
    """Round-trip times in ms of `count` daemon.status calls (or until `stop` is set, at least `count`)."""
    sock, reader = connect(path)
    times = []
    try:
        n = 0
        while n < count or (stop is not None and not stop.is_set()):
            line = json.dumps({"jsonrpc": "2.0", "id": n, "method": "daemon.status"}).encode() + b"\n"
            start = time.perf_counter()
            sock.sendall(line)
            reply = json.loads(reader.readline())
            times.append((time.perf_counter() - start) * 1000)
            if reply.get("id") != n or "result" not in reply:
                raise SystemExit(f"unexpected probe reply: {reply}")
            n += 1
    finally:
        sock.close()
    return times


def attack(path, bombs, depth, result):
    sock, reader = connect(path)
    try:
        bomb = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":' + b"[" * depth + b"]" * depth + b"}\n"
        start = time.perf_counter()
        sock.sendall(bomb * bombs)
        codes = [json.loads(reader.readline()).get("error", {}).get("code") for _ in range(bombs)]
        result["seconds"] = time.perf_counter() - start
        result["codes"] = codes
    finally:
        sock.close()


def summary(name, times):
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"{name:<16} n={len(times):<5} p50 {statistics.median(ordered):8.2f} ms   p99 {p99:8.2f} ms   max {ordered[-1]:8.2f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket", default="./regcoded.sock")
    parser.add_argument("--bombs", type=int, default=20, help="nesting bombs the attacker sends (default 20)")
    parser.add_argument("--depth", type=int, default=512, help="nesting depth of each bomb (default 512)")
    parser.add_argument("--probes", type=int, default=200, help="probe calls per phase, at least (default 200)")
    args = parser.parse_args()

    summary("alone", probe(args.socket, args.probes))

    result = {}
    stop = threading.Event()
    attacker = threading.Thread(target=lambda: (attack(args.socket, args.bombs, args.depth, result), stop.set()))
    times = []
    prober = threading.Thread(target=lambda: times.extend(probe(args.socket, args.probes, stop)))
    prober.start()
    attacker.start()
    attacker.join()
    prober.join()
    summary(f"with {args.bombs} bombs", times)
    codes = sorted(set(result.get("codes", [])), key=str)
    print(f"attacker: {args.bombs} bombs of depth {args.depth}, all replies in {result.get('seconds', float('nan')):.3f} s, error codes {codes}")


if __name__ == "__main__":
    main()
