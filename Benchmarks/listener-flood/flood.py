#!/usr/bin/env python3
"""Connection flood against one listener on loopback: opens up to N connections (a bounded loop), holds them,
and reports how many the server held, how many it closed at once, and the target's descriptors before and after.

    flood.py --port PORT --pid PID [--count 20000] [--hold 15] [--half-sent]

The target process is only observed (/proc/PID/fd, whether it lives); nothing is sent unless --half-sent, which
sends the start of an HTTP request on every connection and never finishes it.
"""
import argparse
import errno
import os
import resource
import select
import socket
import time


def descriptors(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def closed_by_server(sock):
    try:
        while True:
            data = sock.recv(4096, socket.MSG_DONTWAIT)
            if not data:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--hold", type=float, default=15.0)
    parser.add_argument("--half-sent", action="store_true")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    before = descriptors(args.pid)
    sockets, failures = [], {}
    started = time.monotonic()
    for _ in range(args.count):
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        except OSError as error:
            # This process is out of descriptors itself: stop here and report.
            failures["client " + errno.errorcode.get(error.errno, str(error))] = 1
            break
        sock.settimeout(2.0)
        try:
            sock.connect(("127.0.0.1", args.port))
        except OSError as error:
            name = errno.errorcode.get(error.errno, str(error))
            failures[name] = failures.get(name, 0) + 1
            sock.close()
            if sum(failures.values()) > 100:
                break
            continue
        sock.setblocking(False)
        if args.half_sent:
            sock.send(b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        sockets.append(sock)
    connected = time.monotonic() - started
    time.sleep(1.0)
    closed_at_once = sum(1 for s in sockets if closed_by_server(s))
    during = descriptors(args.pid)
    deadline = time.monotonic() + args.hold
    while time.monotonic() < deadline and alive(args.pid):
        time.sleep(0.5)
    closed_by_end = sum(1 for s in sockets if closed_by_server(s))
    print("connected %d in %.1f s (connect failures: %s)" % (len(sockets), connected, failures or "none"))
    print("closed by the server within 1 s: %d; held: %d" % (closed_at_once, len(sockets) - closed_at_once))
    print("closed by the server after %.0f s more: %d" % (args.hold, closed_by_end))
    print("target descriptors: before %s, during %s, after hold %s" % (before, during, descriptors(args.pid)))
    print("target alive: %s" % alive(args.pid))
    for s in sockets:
        s.close()


if __name__ == "__main__":
    main()
