"""In-process stand-ins for the daemon's wire protocols (threads on loopback / a Unix socket in tmp)."""

import json
import os
import socket
import socketserver
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class EventLog:
    """Events with gap-free seqs; waiters are woken on each publish."""

    def __init__(self):
        self.events = []
        self.cond = threading.Condition()

    def publish(self, device="fake-1", name="status", args=None):
        with self.cond:
            seq = len(self.events) + 1
            event = {"seq": seq, "time": "2026-11-21T10:00:00.000Z", "device": device, "app": "main",
                     "name": name, "args": args or {}}
            self.events.append(event)
            self.cond.notify_all()
            return event

    def last_seq(self):
        with self.cond:
            return len(self.events)

    def after(self, since, timeout):
        """Events after `since`, waiting up to `timeout` for at least one."""
        with self.cond:
            self.cond.wait_for(lambda: len(self.events) > since, timeout)
            return list(self.events[since:])


class FakeSocketDaemon:
    """A JSON-RPC line server on a Unix socket.

    Methods: `daemon.status`, `echo`, `fail` (error 1001), `emit` (publishes `count` events, then
    answers), `hold` (answered only after `release`, so replies go out in the reverse order),
    `subscribe` (replay after `since`, then live; with `cutoff_after` set, each subscription is cut
    off after that many events).
    """

    def __init__(self, cutoff_after=None):
        self.log = EventLog()
        self.cutoff_after = cutoff_after
        self.subscribe_calls = []
        self.held = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.directory = tempfile.mkdtemp(prefix="rc-fake-")
        self.path = os.path.join(self.directory, "fake.sock")
        fake = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                send_lock = threading.Lock()
                stop = threading.Event()

                def send(message):
                    with send_lock:
                        self.wfile.write((json.dumps(message) + "\n").encode())
                        self.wfile.flush()

                try:
                    for line in self.rfile:
                        if not line.strip():
                            continue
                        request = json.loads(line)
                        fake.answer(request, send, stop, self.connection)
                except (OSError, ValueError):
                    pass
                finally:
                    stop.set()

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        self.server = Server(self.path, Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def answer(self, request, send, stop, connection):
        method = request.get("method")
        params = request.get("params") or {}
        rid = request.get("id")
        if method == "daemon.status":
            send({"jsonrpc": "2.0", "id": rid, "result": {"starting": False, "lastSeq": self.log.last_seq()}})
        elif method == "echo":
            send({"jsonrpc": "2.0", "id": rid, "result": params})
        elif method == "fail":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": 1001, "message": "unknown device", "data": {"device": "x"}}})
        elif method == "emit":
            for _ in range(params.get("count", 1)):
                self.log.publish(name="emitted")
            send({"jsonrpc": "2.0", "id": rid, "result": {"lastSeq": self.log.last_seq()}})
        elif method == "hold":
            with self.lock:
                self.held.append(rid)
        elif method == "release":
            with self.lock:
                held, self.held = self.held, []
            for held_id in reversed(held):
                send({"jsonrpc": "2.0", "id": held_id, "result": {"released": held_id}})
            send({"jsonrpc": "2.0", "id": rid, "result": {"count": len(held)}})
        elif method == "subscribe":
            since = params.get("since")
            self.subscribe_calls.append(params)
            last = self.log.last_seq()
            send({"jsonrpc": "2.0", "id": rid, "result": {"subscribed": True, "lastSeq": last, "since": since}})
            threading.Thread(target=self.stream, args=(since if since is not None else last, send, stop, connection),
                             daemon=True).start()
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "unknown method %s" % method}})

    def stream(self, since, send, stop, connection):
        sent = 0
        try:
            while not stop.is_set() and not self.stopping.is_set():
                for event in self.log.after(since, 0.1):
                    send({"jsonrpc": "2.0", "method": "event", "params": event})
                    since = event["seq"]
                    sent += 1
                    if self.cutoff_after is not None and sent >= self.cutoff_after:
                        send({"jsonrpc": "2.0", "method": "cutoff", "params": {"reason": "slow", "lastSeq": since}})
                        connection.shutdown(socket.SHUT_RDWR)
                        return
        except (OSError, ValueError):  # the client went away and the handler closed the connection's files
            pass

    def close(self):
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.rmdir(self.directory)


class FakeHTTPDaemon:
    """`POST /rpc` (echo, fail, emit, daemon.status) and `GET /events` as server-sent events on loopback.

    With `cutoff_after`, each stream sends that many events then `event: cutoff`; with `drop_after`,
    it sends that many events plus half of the next one, then drops the connection.
    """

    def __init__(self, cutoff_after=None, drop_after=None, token=None):
        self.log = EventLog()
        self.requests = []
        self.stopping = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def authorized(self):
                if token is not None and self.headers.get("Authorization") != "Bearer " + token:
                    self.send_response(401)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return False
                return True

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length))
                if not self.authorized():
                    return
                method, rid, params = request["method"], request.get("id"), request.get("params") or {}
                if method == "daemon.status":
                    reply = {"jsonrpc": "2.0", "id": rid, "result": {"starting": False, "lastSeq": fake.log.last_seq()}}
                elif method == "echo":
                    reply = {"jsonrpc": "2.0", "id": rid, "result": params}
                elif method == "emit":
                    for _ in range(params.get("count", 1)):
                        fake.log.publish(name="emitted")
                    reply = {"jsonrpc": "2.0", "id": rid, "result": {"lastSeq": fake.log.last_seq()}}
                else:
                    reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": 1001, "message": "unknown device"}}
                body = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if not self.authorized():
                    return
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                since = int(self.headers.get("Last-Event-ID") or query.get("since", ["0"])[0])
                fake.requests.append({"since": since, "query": query, "last_event_id": self.headers.get("Last-Event-ID")})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
                sent = 0
                try:
                    while not fake.stopping.is_set():
                        for event in fake.log.after(since, 0.1):
                            data = json.dumps(event)
                            if drop_after is not None and sent >= drop_after:
                                self.wfile.write(("id: %d\nevent: event\ndata: %s" % (event["seq"], data[: len(data) // 2])).encode())
                                self.wfile.flush()
                                self.connection.shutdown(socket.SHUT_RDWR)
                                return
                            self.wfile.write(("id: %d\r\nevent: event\r\ndata: %s\r\n\r\n" % (event["seq"], data)).encode())
                            self.wfile.flush()
                            since = event["seq"]
                            sent += 1
                            if cutoff_after is not None and sent >= cutoff_after:
                                self.wfile.write(("event: cutoff\ndata: %s\n\n" % json.dumps({"reason": "slow", "lastSeq": since})).encode())
                                self.wfile.flush()
                                return
                except OSError:
                    return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
