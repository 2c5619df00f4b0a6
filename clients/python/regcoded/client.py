"""The regcoded client: JSON-RPC calls and event subscriptions over the Unix socket or HTTP."""

import http.client
import itertools
import json
import queue
import socket as _socket
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from .framing import SSEParser, decode_line, encode_line

Event = Dict[str, Any]

DEFAULT_SOCKET = "./regcoded.sock"


class RegcodedError(Exception):
    """A JSON-RPC error answered by the daemon (e.g. 1001 unknown device, -32602 invalid params)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__("%s (%d)" % (message, code) + ("" if data is None else ": %s" % json.dumps(data)))
        self.code = code
        self.message = message
        self.data = data


class RegcodedConnectionError(ConnectionError):
    """The daemon could not be reached, or the connection to it failed."""


def _as_list(value: Union[None, str, Iterable[str]]) -> Optional[List[str]]:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return list(value)


def _raise_for_response(response: Dict[str, Any]) -> Any:
    if "error" in response and response["error"] is not None:
        error = response["error"]
        raise RegcodedError(int(error.get("code", 0)), str(error.get("message", "")), error.get("data"))
    return response.get("result")


# MARK: Unix socket


def _socket_unreachable(path: str, error: OSError) -> RegcodedConnectionError:
    reason = error.strerror or str(error)
    return RegcodedConnectionError(
        "nothing listens on the control socket %s (%s): start the daemon (regcoded --socket %s) "
        "or pass Regcoded(socket=...) the path it listens on" % (path, reason, path)
    )


def _connect_unix(path: str) -> _socket.socket:
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except (FileNotFoundError, ConnectionRefusedError) as error:
        sock.close()
        raise _socket_unreachable(path, error) from None
    except PermissionError as error:
        sock.close()
        raise RegcodedConnectionError(
            "permission denied on the control socket %s (%s): join the daemon's socket group "
            "(--socket-group) or run as its user" % (path, error.strerror)
        ) from None
    except OSError:
        sock.close()
        raise
    return sock


def _shutdown(sock: Optional[_socket.socket]) -> None:
    if sock is None:
        return
    try:
        sock.shutdown(_socket.SHUT_RDWR)
    except OSError:
        pass


class _Waiter:
    __slots__ = ("done", "response")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.response: Optional[Dict[str, Any]] = None


class _SocketConnection:
    """One control connection: a reader thread owns the input and hands each reply to the caller waiting
    for its id; writes are serialised. Any number of threads may call at once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._sock = _connect_unix(path)
        self._reader = self._sock.makefile("rb")
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._pending: Dict[int, _Waiter] = {}
        self._closed_reason: Optional[str] = None
        self._thread = threading.Thread(target=self._read_loop, name="regcoded-socket-reader", daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        return self._closed_reason is not None

    def request(self, message_id: int, method: str, params: Any, timeout: Optional[float]) -> Dict[str, Any]:
        waiter = _Waiter()
        with self._lock:
            if self._closed_reason is not None:
                raise RegcodedConnectionError("the connection to %s is closed (%s)" % (self.path, self._closed_reason))
            self._pending[message_id] = waiter
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": message_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            with self._send_lock:
                self._sock.sendall(encode_line(message))
        except OSError as error:
            with self._lock:
                self._pending.pop(message_id, None)
            raise RegcodedConnectionError("sending %s to %s failed: %s" % (method, self.path, error)) from None
        if not waiter.done.wait(timeout):
            with self._lock:
                self._pending.pop(message_id, None)
            raise TimeoutError("%s: no answer from %s within %ss" % (method, self.path, timeout))
        if waiter.response is None:
            raise RegcodedConnectionError(
                "the connection to %s closed before %s was answered (%s)" % (self.path, method, self._closed_reason)
            )
        return waiter.response

    def _read_loop(self) -> None:
        reason = "closed by the daemon"
        try:
            for line in self._reader:
                message = decode_line(line)
                if message is None or "method" in message:
                    # Notifications only arrive on a connection that subscribed; Regcoded.subscribe() uses its own.
                    continue
                message_id = message.get("id")
                with self._lock:
                    waiter = self._pending.pop(message_id, None) if isinstance(message_id, int) else None
                if waiter is not None:
                    waiter.response = message
                    waiter.done.set()
        except (OSError, ValueError) as error:
            reason = str(error)
        finally:
            with self._lock:
                if self._closed_reason is None:
                    self._closed_reason = reason
                pending = list(self._pending.values())
                self._pending.clear()
            for waiter in pending:
                waiter.done.set()

    def close(self) -> None:
        with self._lock:
            if self._closed_reason is None:
                self._closed_reason = "closed by the client"
        _shutdown(self._sock)
        self._thread.join(5)
        self._reader.close()
        self._sock.close()


class _SocketEventStream:
    """A dedicated subscription connection: `subscribe`, then the stream of `event`/`cutoff` notifications."""

    def __init__(self, path: str, params: Dict[str, Any], timeout: float) -> None:
        self.path = path
        self._sock = _connect_unix(path)
        self._reader = self._sock.makefile("rb")
        try:
            self._sock.settimeout(timeout)
            self._sock.sendall(encode_line({"jsonrpc": "2.0", "id": 1, "method": "subscribe", "params": params}))
            while True:
                line = self._reader.readline()
                if not line:
                    raise RegcodedConnectionError("%s closed the connection before answering subscribe" % path)
                message = decode_line(line)
                if message is not None and message.get("id") == 1:
                    self.reply = _raise_for_response(message)
                    break
            self._sock.settimeout(None)
        except BaseException:
            self.close()
            raise

    def __iter__(self) -> Iterator[tuple]:
        for line in self._reader:
            message = decode_line(line)
            if message is None:
                continue
            method = message.get("method")
            if method in ("event", "cutoff"):
                yield method, message.get("params") or {}

    def interrupt(self) -> None:
        """Ends a read blocked in another thread (the reading thread then calls close())."""
        _shutdown(self._sock)

    def close(self) -> None:
        _shutdown(self._sock)
        self._reader.close()
        self._sock.close()


# MARK: HTTP


def split_console_url(url: str, token: Optional[str] = None) -> Tuple[str, Optional[str]]:
    """The address and the token of a console URL as the daemon prints it (`http://127.0.0.1:PORT/#token=...`).

    An explicit `token` wins over the one in the fragment; a URL without a fragment is returned as it is.
    """
    base, _, fragment = url.partition("#")
    for part in fragment.split("&"):
        name, _, value = part.partition("=")
        if name == "token" and value and token is None:
            token = urllib.parse.unquote(value)
    return base, token


class _HTTPEndpoint:
    def __init__(self, url: str, token: Optional[str]) -> None:
        url, token = split_console_url(url, token)
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("url must look like http://127.0.0.1:PORT, got %r" % url)
        self.url = url.rstrip("/")
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = parsed.port or (443 if parsed.scheme == "https" else 80)
        self.prefix = parsed.path.rstrip("/")
        self.token = token

    def connection(self, timeout: Optional[float]) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def headers(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        headers = {"User-Agent": "regcoded-python"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        headers.update(extra or {})
        return headers

    def unreachable(self, error: OSError) -> RegcodedConnectionError:
        reason = getattr(error, "strerror", None) or str(error)
        return RegcodedConnectionError(
            "nothing listens at %s (%s): start the daemon with --http %s:%d (it prints "
            "'regcoded: console: http://…/') or pass Regcoded(url=...) the address it printed"
            % (self.url, reason, self.host, self.port)
        )

    def status_error(self, status: int, reason: str, body: bytes) -> RegcodedConnectionError:
        text = body.decode("utf-8", "replace").strip()
        if status == 401:
            return RegcodedConnectionError(
                "%s answered 401 Unauthorized: pass Regcoded(url=...) the console URL the daemon printed "
                "(it ends in #token=...), or token=... with the contents of its token file (--http-token-file, "
                "else <socket>.http-token beside its socket)" % self.url
            )
        return RegcodedConnectionError("%s answered HTTP %d %s: %s" % (self.url, status, reason, text[:500]))


class _SSEEventStream:
    """`GET /events` as server-sent events: yields ("event", params) and ("cutoff", params)."""

    def __init__(self, endpoint: _HTTPEndpoint, since: int, devices: Optional[List[str]],
                 events: Optional[List[str]], timeout: float) -> None:
        query: List[tuple] = [("since", str(since))]
        for device in devices or []:
            query.append(("device", device))
        for name in events or []:
            query.append(("events", name))
        path = endpoint.prefix + "/events?" + urllib.parse.urlencode(query)
        self._conn = endpoint.connection(timeout)
        self._sock: Optional[_socket.socket] = None
        try:
            self._conn.connect()
            self._sock = self._conn.sock
            self._conn.request("GET", path, headers=endpoint.headers({
                "Accept": "text/event-stream", "Last-Event-ID": str(since), "Cache-Control": "no-cache",
            }))
            self._response = self._conn.getresponse()
            if self._response.status != 200:
                raise endpoint.status_error(self._response.status, self._response.reason, self._response.read())
            # Keep-alive comments arrive every 15 s; a stream silent for much longer is dead.
            if self._sock is not None:
                self._sock.settimeout(max(timeout, 60.0))
        except (ConnectionRefusedError, FileNotFoundError) as error:
            self.close()
            raise endpoint.unreachable(error) from None
        except BaseException:
            self.close()
            raise

    def __iter__(self) -> Iterator[tuple]:
        parser = SSEParser()
        while True:
            line = self._response.readline()
            if not line:
                return
            sse = parser.feed_line(line.decode("utf-8"))
            if sse is None:
                continue
            if sse.event in ("event", "cutoff"):
                yield sse.event, json.loads(sse.data)

    def interrupt(self) -> None:
        """Ends a read blocked in another thread (the reading thread then calls close())."""
        _shutdown(self._sock)

    def close(self) -> None:
        _shutdown(self._sock)
        response = getattr(self, "_response", None)
        if response is not None:
            response.close()
        self._conn.close()


# MARK: Subscription


class _End:
    def __init__(self, error: Optional[BaseException]) -> None:
        self.error = error


class Subscription:
    """Events from the daemon, in seq order, each exactly once.

    A thread reads the stream into a queue, so events are never lost while the caller is busy (for
    example waiting for a call's reply). When the daemon cuts the stream off, or the connection drops,
    it reconnects from the last seq it received.
    """

    #: How long reconnecting is retried before the subscription gives up and reports the error.
    reconnect_for = 10.0

    def __init__(self, open_stream: Callable[[int], Any], since: int, describe: str) -> None:
        self._open_stream = open_stream
        self._describe = describe
        self._queue: "queue.Queue[Union[Event, _End]]" = queue.Queue()
        self._closed = threading.Event()
        self._stream_lock = threading.Lock()
        self._received_seq = since
        self._ended: Optional[_End] = None
        #: seq of the last event handed out (the `since` it started from until then).
        self.last_seq = since
        self._stream = open_stream(since)
        self._thread = threading.Thread(target=self._run, name="regcoded-subscription", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        stream = self._stream
        failing_since: Optional[float] = None
        delay = 0.05
        error: Optional[BaseException] = None
        while not self._closed.is_set():
            if stream is None:
                try:
                    stream = self._open_stream(self._received_seq)
                except (OSError, RegcodedError, ValueError, http.client.HTTPException) as failure:
                    error = failure
                    now = time.monotonic()
                    failing_since = failing_since or now
                    if now - failing_since > self.reconnect_for:
                        break
                    self._closed.wait(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                with self._stream_lock:
                    if self._closed.is_set():
                        stream.close()
                        break
                    self._stream = stream
            try:
                for kind, params in stream:
                    if kind == "event":
                        seq = params.get("seq")
                        if isinstance(seq, int):
                            if seq <= self._received_seq:
                                continue
                            self._received_seq = seq
                        self._queue.put(params)
                        failing_since, delay, error = None, 0.05, None
                    else:  # cutoff: the daemon closes the stream; resume from what arrived
                        break
            except (OSError, ValueError, http.client.HTTPException) as failure:
                error = failure  # a stream cut mid-chunk or mid-line: resume from the last whole event
            with self._stream_lock:
                stream.close()
                self._stream = stream = None
        if stream is not None:
            with self._stream_lock:
                stream.close()
                self._stream = None
        self._queue.put(_End(None if self._closed.is_set() else RegcodedConnectionError(
            "subscription to %s ended after seq %d: %s" % (self._describe, self._received_seq, error))))

    def next(self, timeout: Optional[float] = None) -> Event:
        """The next event; raises TimeoutError after `timeout` seconds, StopIteration once closed."""
        if self._ended is not None:
            self._raise_end()
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no event from %s within %ss (last seq %d)" % (self._describe, timeout, self.last_seq)) from None
        if isinstance(item, _End):
            self._ended = item
            self._raise_end()
        self.last_seq = item.get("seq", self.last_seq)
        return item

    def _raise_end(self) -> None:
        assert self._ended is not None
        if self._ended.error is not None:
            raise self._ended.error
        raise StopIteration

    def __iter__(self) -> "Subscription":
        return self

    def __next__(self) -> Event:
        return self.next()

    def wait_for(self, predicate: Callable[[Event], bool], timeout: float = 30) -> Event:
        """The first event for which predicate(event) is true; events before it are consumed.
        Raises TimeoutError when none arrives within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no matching event from %s within %ss (last seq %d)" % (self._describe, timeout, self.last_seq))
            try:
                event = self.next(timeout=remaining)
            except StopIteration:
                raise RegcodedConnectionError("the subscription was closed while waiting for an event") from None
            except TimeoutError:
                raise TimeoutError("no matching event from %s within %ss (last seq %d)" % (self._describe, timeout, self.last_seq)) from None
            if predicate(event):
                return event

    def close(self) -> None:
        self._closed.set()
        with self._stream_lock:
            stream = self._stream
            if stream is not None:
                stream.interrupt()
        self._thread.join(5)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# MARK: Client


class Regcoded:
    """A client for regcoded's control socket (`socket=`) or HTTP API (`url=`).

    >>> with Regcoded(socket="./regcoded.sock") as rc:
    ...     rc.call("devices.list")
    """

    def __init__(self, socket: Optional[str] = None, url: Optional[str] = None, token: Optional[str] = None) -> None:
        if socket is not None and url is not None:
            raise ValueError("pass socket= or url=, not both")
        self.url = split_console_url(url)[0].rstrip("/") if url is not None else None
        self.socket_path = None if url is not None else (socket if socket is not None else DEFAULT_SOCKET)
        self._http = _HTTPEndpoint(url, token) if url is not None else None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._conn: Optional[_SocketConnection] = None
        self._idle_http: List[http.client.HTTPConnection] = []
        self._subscriptions: List[Subscription] = []
        self._closed = False

    def __repr__(self) -> str:
        return "Regcoded(%s=%r)" % (("url", self.url) if self._http else ("socket", self.socket_path))

    @property
    def target(self) -> str:
        """The socket path or URL this client talks to."""
        return self.url if self._http is not None else str(self.socket_path)

    # MARK: Calls

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = 30) -> Any:
        """Calls one JSON-RPC method and returns its result; raises RegcodedError for an error answer."""
        if self._closed:
            raise RegcodedConnectionError("this client is closed")
        with self._lock:
            message_id = next(self._ids)
        if self._http is not None:
            response = self._call_http(message_id, method, params, timeout)
        else:
            response = self._socket_connection().request(message_id, method, params, timeout)
        if response is None:
            return None
        return _raise_for_response(response)

    def _socket_connection(self) -> _SocketConnection:
        with self._lock:
            if self._conn is None or self._conn.closed:
                if self._conn is not None:
                    self._conn.close()
                self._conn = _SocketConnection(str(self.socket_path))
            return self._conn

    def _call_http(self, message_id: int, method: str, params: Any, timeout: Optional[float]) -> Optional[Dict[str, Any]]:
        endpoint = self._http
        assert endpoint is not None
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": message_id, "method": method}
        if params is not None:
            message["params"] = params
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        headers = endpoint.headers({"Content-Type": "application/json", "Accept": "application/json"})
        for attempt in range(2):
            with self._lock:
                conn = self._idle_http.pop() if self._idle_http else None
            reused = conn is not None
            if conn is None:
                conn = endpoint.connection(timeout)
            else:
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
            try:
                conn.request("POST", endpoint.prefix + "/rpc", body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
            except (ConnectionRefusedError, FileNotFoundError) as error:
                conn.close()
                raise endpoint.unreachable(error) from None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as error:
                conn.close()
                if reused and attempt == 0:
                    continue  # an idle keep-alive connection the server had closed
                raise RegcodedConnectionError("%s: %s closed the connection: %s" % (method, endpoint.url, error)) from None
            except _socket.timeout:
                conn.close()
                raise TimeoutError("%s: no answer from %s within %ss" % (method, endpoint.url, timeout)) from None
            except (OSError, http.client.HTTPException) as error:
                conn.close()
                raise RegcodedConnectionError("%s: %s failed: %s" % (method, endpoint.url, error)) from None
            if response.will_close:
                conn.close()
            else:
                with self._lock:
                    self._idle_http.append(conn)
            if response.status == 204:
                return None
            if response.status != 200:
                raise endpoint.status_error(response.status, response.reason, data)
            try:
                return json.loads(data)
            except ValueError:
                raise RegcodedConnectionError("%s: %s answered something other than JSON: %r" % (method, endpoint.url, data[:200])) from None
        raise AssertionError("unreachable")

    # MARK: Events

    def subscribe(self, since: Optional[int] = None, devices: Union[None, str, Iterable[str]] = None,
                  events: Union[None, str, Iterable[str]] = None, timeout: float = 30) -> Subscription:
        """Subscribes to events after seq `since` (default: the daemon's current lastSeq), optionally only
        those of `devices` and/or with the names in `events`. Returns once the subscription is in place."""
        device_list = _as_list(devices)
        event_list = _as_list(events)
        if since is None:
            since = int(self.status()["lastSeq"])
        if self._http is not None:
            endpoint = self._http

            def open_stream(after: int) -> Any:
                return _SSEEventStream(endpoint, after, device_list, event_list, timeout)
        else:
            path = str(self.socket_path)

            def open_stream(after: int) -> Any:
                params: Dict[str, Any] = {"since": after}
                if device_list is not None:
                    params["devices"] = device_list
                if event_list is not None:
                    params["events"] = event_list
                return _SocketEventStream(path, params, timeout)

        subscription = Subscription(open_stream, since, self.target)
        with self._lock:
            self._subscriptions = [s for s in self._subscriptions if not s._closed.is_set()]
            self._subscriptions.append(subscription)
        return subscription

    def wait_for(self, predicate: Callable[[Event], bool], timeout: float = 30,
                 devices: Union[None, str, Iterable[str]] = None, events: Union[None, str, Iterable[str]] = None) -> Event:
        """Subscribes from the daemon's current lastSeq and returns the first event matching predicate."""
        with self.subscribe(devices=devices, events=events) as subscription:
            return subscription.wait_for(predicate, timeout)

    # MARK: Helpers

    def status(self) -> Dict[str, Any]:
        """`daemon.status`."""
        return self.call("daemon.status")

    def devices(self) -> List[Dict[str, Any]]:
        """`devices.list`: one entry per device."""
        result = self.call("devices.list")
        if isinstance(result, dict) and "devices" in result:
            return result["devices"]
        return result

    def close(self) -> None:
        """Closes the connection and every subscription made through this client."""
        self._closed = True
        with self._lock:
            subscriptions, self._subscriptions = self._subscriptions, []
            conn, self._conn = self._conn, None
            idle, self._idle_http = self._idle_http, []
        for subscription in subscriptions:
            subscription.close()
        if conn is not None:
            conn.close()
        for http_conn in idle:
            http_conn.close()

    def __enter__(self) -> "Regcoded":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
