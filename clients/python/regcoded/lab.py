"""Lab helpers: a regcoded process for a test, a scripted device, and the embedded simulator."""

import errno
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Tuple

from .client import Event, Regcoded, RegcodedConnectionError, RegcodedError

CONSOLE_LINE = re.compile(r"regcoded: console: (http://\S+?)/?\s*$", re.MULTILINE)


class DeviceError(Exception):
    """A device reported a failure (its events say why); `event` is the last error event seen."""

    def __init__(self, message: str, event: Optional[Event] = None) -> None:
        super().__init__(message if event is None else "%s; last error event: %s" % (message, json.dumps(event)))
        self.event = event


def _status_id(event: Event) -> Optional[str]:
    if event.get("name") != "status":
        return None
    return ((event.get("args") or {}).get("statusDictionary") or {}).get("errorId")


def _is_error(event: Event) -> bool:
    name = event.get("name")
    args = event.get("args") or {}
    if name == "status":
        return (args.get("statusDictionary") or {}).get("level") == "error"
    if name in ("setAuthenticationStatus", "setRequestorComplete"):
        return args.get("status") == 0
    return name in ("tokenRequestFailed", "oauth.failed", "oauth.denied")


# An OAuth device's events that end a login without tokens.
_OAUTH_LOGIN_ENDS = ("oauth.denied", "oauth.expired", "oauth.failed", "oauth.cancelled")


# MARK: The daemon process


def locate_binary(explicit: Optional[str] = None) -> Tuple[Optional[str], List[str]]:
    """The regcoded binary and every place looked at, in order: `explicit`, else $REGCODED_BIN, else
    `regcoded` on PATH, else the newest `.build/{debug,release}/regcoded` of a Swift package above the
    working directory or above this package's own files (an editable or source-tree install).

    A relative path (`.build/debug/regcoded`) is tried against the working directory and then each
    directory above it, so it works from anywhere inside the repository."""
    tried: List[str] = []
    for origin, candidate in (("--regcoded-bin", explicit), ("$REGCODED_BIN", os.environ.get("REGCODED_BIN"))):
        if not candidate:
            continue
        if os.sep not in candidate:
            found = shutil.which(candidate)
            tried.append("%s=%s on PATH" % (origin, candidate))
            if found:
                return found, tried
            continue
        for base in [""] if os.path.isabs(candidate) else _ancestors(os.getcwd()):
            path = os.path.join(base, candidate) if base else candidate
            tried.append("%s: %s" % (origin, os.path.abspath(path)))
            if _is_executable(path):
                return os.path.abspath(path), tried
        # An explicit choice that does not exist is an error, not a reason to run some other build.
        return None, tried
    tried.append("regcoded on PATH (%s)" % os.environ.get("PATH", ""))
    found = shutil.which("regcoded")
    if found:
        return found, tried
    builds: List[str] = []
    seen = set()
    for start in (os.getcwd(), os.path.dirname(os.path.abspath(__file__))):
        for directory in _ancestors(start):
            if directory in seen or not os.path.isfile(os.path.join(directory, "Package.swift")):
                continue
            seen.add(directory)
            for configuration in ("debug", "release"):
                path = os.path.join(directory, ".build", configuration, "regcoded")
                tried.append(path)
                if _is_executable(path):
                    builds.append(path)
    if builds:
        return max(builds, key=os.path.getmtime), tried
    return None, tried


def find_binary(explicit: Optional[str] = None) -> Optional[str]:
    """The regcoded binary as `locate_binary` finds it, or None."""
    return locate_binary(explicit)[0]


def missing_binary_message(tried: List[str]) -> str:
    """What to say when no binary was found: every place looked at, and how to make one."""
    return ("no regcoded binary found; looked at:\n  " + "\n  ".join(tried) +
            "\nbuild it (swift build --product regcoded), or set REGCODED_BIN or --regcoded-bin to its path")


def _ancestors(directory: str) -> List[str]:
    directory = os.path.abspath(directory)
    result = [directory]
    while os.path.dirname(directory) != directory:
        directory = os.path.dirname(directory)
        result.append(directory)
    return result


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


_HELP_CACHE: Dict[str, str] = {}


def binary_help(binary: str) -> str:
    if binary not in _HELP_CACHE:
        done = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        _HELP_CACHE[binary] = done.stdout.decode("utf-8", "replace")
    return _HELP_CACHE[binary]


class LabDaemon:
    """A `regcoded` on its embedded simulator, with no configured devices, state in `directory`."""

    def __init__(self, binary: str, directory: str, http: Optional[bool] = None,
                 extra_args: Optional[List[str]] = None) -> None:
        binary = os.path.abspath(binary) if os.sep in binary else (shutil.which(binary) or binary)
        if not _is_executable(binary):
            raise FileNotFoundError(errno.ENOENT, missing_binary_message([binary]), binary)
        self.binary = binary
        self.directory = str(directory)
        self.database = os.path.join(self.directory, "regcoded.sqlite")
        socket_path = os.path.join(self.directory, "regcoded.sock")
        self._socket_dir: Optional[str] = None
        if len(socket_path.encode()) > 100:  # sun_path holds 108 bytes
            self._socket_dir = tempfile.mkdtemp(prefix="regcoded-")
            socket_path = os.path.join(self._socket_dir, "regcoded.sock")
        self.socket_path = socket_path
        self.stdout_path = os.path.join(self.directory, "regcoded.out")
        self.stderr_path = os.path.join(self.directory, "regcoded.err")
        help_text = binary_help(binary)
        self.supports_http = "--http" in re.sub(r"--http-token-file", "", help_text)
        self.http = self.supports_http if http is None else http
        self.args = [
            binary,
            "--devices", "0",
            "--database", self.database,
            "--socket", self.socket_path,
            "--simulator-listen", "127.0.0.1:0",
        ]
        if self.http:
            self.args += ["--http", "127.0.0.1:0"]
        self.args += list(extra_args or [])
        self.process: Optional[subprocess.Popen] = None
        self.http_url: Optional[str] = None
        self.status: Dict[str, Any] = {}

    def start(self, timeout: float = 30) -> None:
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(self.args, stdout=out, stderr=err, cwd=self.directory)
        deadline = time.monotonic() + timeout
        client = Regcoded(socket=self.socket_path)
        try:
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError("regcoded exited with status %s while starting:\n%s"
                                       % (self.process.returncode, self.output_tail()))
                if time.monotonic() > deadline:
                    raise RuntimeError("regcoded did not come up within %ss:\n%s" % (timeout, self.output_tail()))
                try:
                    status = client.call("daemon.status", timeout=5)
                except (RegcodedConnectionError, TimeoutError, RegcodedError):
                    status = None
                if status is not None and not status.get("starting"):
                    self.status = status
                    if not self.http or self._read_http_url():
                        return
                time.sleep(0.05)  # polling the daemon's start-up, with the deadline above
        except BaseException:
            self.stop(timeout=10)
            raise
        finally:
            client.close()

    def _read_http_url(self) -> bool:
        with open(self.stdout_path, "r", encoding="utf-8", errors="replace") as out:
            match = CONSOLE_LINE.search(out.read())
        if match:
            # The fragment carries the generated token; the client reads it from the token file instead.
            self.http_url = match.group(1).partition("#")[0].rstrip("/")
        return self.http_url is not None

    def output_tail(self, lines: int = 30) -> str:
        parts = []
        for path in (self.stdout_path, self.stderr_path):
            try:
                with open(path, "r", encoding="utf-8", errors="replace") as handle:
                    parts.extend(handle.read().splitlines()[-lines:])
            except OSError:
                pass
        return "\n".join(parts)

    def client(self) -> Regcoded:
        return Regcoded(socket=self.socket_path)

    @property
    def http_token_path(self) -> str:
        """Where the daemon writes the token it generates for its HTTP listener: beside its socket."""
        stem = self.socket_path[: -len(".sock")] if self.socket_path.endswith(".sock") else self.socket_path
        return stem + ".http-token"

    def http_client(self, token: Optional[str] = None) -> Regcoded:
        """A client of the HTTP listener, with `token` or else the token the daemon wrote beside its socket."""
        if self.http_url is None:
            raise RuntimeError("this regcoded has no HTTP listener (the binary does not support --http)")
        if token is None and os.path.exists(self.http_token_path):
            with open(self.http_token_path, "r", encoding="utf-8") as handle:
                token = handle.read().strip() or None
        return Regcoded(url=self.http_url, token=token)

    def stop(self, timeout: float = 10) -> Optional[int]:
        """SIGTERM, then waits up to `timeout` s; kills it and raises TimeoutError if it did not exit."""
        try:
            if self.process is None or self.process.poll() is not None:
                return None if self.process is None else self.process.returncode
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise TimeoutError("regcoded did not exit within %ss of SIGTERM:\n%s" % (timeout, self.output_tail()))
        finally:
            if self._socket_dir is not None:
                shutil.rmtree(self._socket_dir, ignore_errors=True)


# MARK: Devices


class Device:
    """One emulated device driven through the daemon; every wait reads the device's own event stream."""

    def __init__(self, client: Regcoded, name: str, since: int) -> None:
        self.client = client
        self.name = name
        self._subscription = client.subscribe(since=since, devices=[name])
        self._history: List[Event] = []
        self._cursor = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "Device(%r)" % self.name

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: float = 30) -> Any:
        """Calls a socket method with this device's name added to the params."""
        return self.client.call(method, dict(params or {}, device=self.name), timeout=timeout)

    # MARK: Reading events

    def events(self) -> List[Event]:
        """Every event of this device since it was added, as far as they have arrived."""
        with self._lock:
            while True:
                try:
                    self._history.append(self._subscription.next(timeout=0))
                except TimeoutError:
                    break
            return list(self._history)

    def _next_event(self, deadline: float, waiting_for: str) -> Event:
        with self._lock:
            if self._cursor < len(self._history):
                event = self._history[self._cursor]
                self._cursor += 1
                return event
            remaining = deadline - time.monotonic()
            try:
                event = self._subscription.next(timeout=max(remaining, 0))
            except TimeoutError:
                raise TimeoutError("%s: no %s before the deadline; %s" % (self.name, waiting_for, self._last_error_text())) from None
            self._history.append(event)
            self._cursor += 1
            return event

    def _last_error(self) -> Optional[Event]:
        for event in reversed(self._history):
            if _is_error(event):
                return event
        return None

    def _last_error_text(self) -> str:
        error = self._last_error()
        return "no error event" if error is None else "last error event: %s" % json.dumps(error)

    def wait_event(self, predicate: Callable[[Event], bool], timeout: float = 30, waiting_for: str = "matching event") -> Event:
        """The next event of this device (after those earlier waits consumed) for which predicate is true."""
        deadline = time.monotonic() + timeout
        while True:
            event = self._next_event(deadline, waiting_for)
            if predicate(event):
                return event

    # MARK: AccessEnabler flows

    def login(self, mvpd: Optional[str] = None, timeout: float = 30) -> str:
        """setRequestor, getAuthentication, answers the provider picker with `mvpd` (or the first MVPD
        offered) and returns the registration code the device shows."""
        deadline = time.monotonic() + timeout
        self.call("setRequestor")
        self._until(deadline, "setRequestorComplete",
                    lambda e: e.get("name") == "setRequestorComplete",
                    failed=lambda e: (e.get("args") or {}).get("status") == 0)
        self.call("getAuthentication")
        while True:
            event = self._next_event(deadline, "registration code")
            name = event.get("name")
            args = event.get("args") or {}
            if name == "displayProviderDialog":
                offered = [m.get("ID") for m in args.get("mvpds") or []]
                if mvpd is None and not offered:
                    raise DeviceError("%s: the provider picker offered no MVPD" % self.name, event)
                choice = mvpd if mvpd is not None else offered[0]
                self.call("setSelectedProvider", {"mvpd": choice})
            elif _status_id(event) == "REGCODE":
                return args["statusDictionary"]["message"]
            elif name == "setAuthenticationStatus" and args.get("status") == 1:
                raise DeviceError("%s is already authenticated (call logout() first)" % self.name, None)
            elif name == "status" and (args.get("statusDictionary") or {}).get("level") == "error":
                raise DeviceError("%s: login failed before a code was shown" % self.name, event)

    def wait_authenticated(self, timeout: float = 30) -> Event:
        """Waits for `setAuthenticationStatus` 1; raises DeviceError if the login fails first."""
        deadline = time.monotonic() + timeout
        return self._until(deadline, "setAuthenticationStatus 1",
                           lambda e: e.get("name") == "setAuthenticationStatus",
                           failed=lambda e: (e.get("args") or {}).get("status") != 1)

    def authorize(self, resource: str, timeout: float = 30) -> str:
        """getAuthorization; returns the short media token (raises DeviceError on tokenRequestFailed)."""
        deadline = time.monotonic() + timeout
        self.call("getAuthorization", {"resource": resource})
        event = self._until(deadline, "setToken for %s" % resource,
                            lambda e: e.get("name") in ("setToken", "tokenRequestFailed")
                            and (e.get("args") or {}).get("resource") == resource,
                            failed=lambda e: e.get("name") == "tokenRequestFailed")
        return event["args"]["token"]

    def logout(self, timeout: float = 30) -> Event:
        """logout; returns the `setAuthenticationStatus` 0 that confirms it."""
        deadline = time.monotonic() + timeout
        self.call("logout")
        return self._until(deadline, "setAuthenticationStatus after logout",
                           lambda e: e.get("name") == "setAuthenticationStatus" and (e.get("args") or {}).get("status") == 0)

    def cancel(self) -> Any:
        """Cancels the provider picker / pending login (`setSelectedProvider` with null)."""
        return self.call("setSelectedProvider", {"mvpd": None})

    # MARK: OAuth device flows (RFC 8628)

    def oauth_login(self, timeout: float = 30) -> Dict[str, Any]:
        """oauth.login; returns the args of the `oauth.codeShown` that follows (`user_code`, `verification_uri`,
        `verification_uri_complete`, `expires_in`, `expires_at`, `interval`, `message`). Raises DeviceError if
        the login ends first (`oauth.failed`, `oauth.denied`, `oauth.expired`, `oauth.cancelled`) or the device
        already holds tokens."""
        deadline = time.monotonic() + timeout
        result = self.call("oauth.login", timeout=max(deadline - time.monotonic(), 0.1))
        if isinstance(result, dict) and result.get("state") == "authenticated":
            raise DeviceError("%s is already authorized (call oauth_logout() first)" % self.name, None)
        while True:
            event = self._next_event(deadline, "oauth.codeShown")
            name = event.get("name")
            if name == "oauth.codeShown":
                return dict(event.get("args") or {})
            if name == "oauth.authorized":
                raise DeviceError("%s is already authorized (call oauth_logout() first)" % self.name, None)
            if name in _OAUTH_LOGIN_ENDS:
                raise DeviceError("%s: OAuth login ended before a code was shown" % self.name, event)

    def wait_oauth_authorized(self, timeout: float = 30) -> Event:
        """Waits for `oauth.authorized` (its args: `scope`, `expires_in`, `refreshable`); raises DeviceError
        with the event if the login ends first (`oauth.denied`, `oauth.expired`, `oauth.failed`,
        `oauth.cancelled`)."""
        deadline = time.monotonic() + timeout
        while True:
            event = self._next_event(deadline, "oauth.authorized")
            name = event.get("name")
            if name == "oauth.authorized":
                return event
            if name in _OAUTH_LOGIN_ENDS:
                raise DeviceError("%s: OAuth login ended with %s" % (self.name, name), event)

    def oauth_logout(self, timeout: float = 30) -> List[Event]:
        """oauth.logout; waits for `oauth.loggedOut` and returns the `oauth.revoked` events before it
        (`token_type_hint`, `status`), one per token the provider revoked (none if there was no grant)."""
        deadline = time.monotonic() + timeout
        self.call("oauth.logout", timeout=max(deadline - time.monotonic(), 0.1))
        revoked: List[Event] = []
        while True:
            event = self._next_event(deadline, "oauth.loggedOut")
            if event.get("name") == "oauth.revoked":
                revoked.append(event)
            elif event.get("name") == "oauth.loggedOut":
                return revoked

    def oauth_cancel(self) -> Any:
        """oauth.cancel: ends a running login without tokens (then `oauth.cancelled`)."""
        return self.call("oauth.cancel")

    # MARK: Any device

    def reset(self) -> Any:
        """`devices.reset`: forgets the device's credentials, tokens and code."""
        return self.client.call("devices.reset", {"device": self.name})

    def get(self) -> Dict[str, Any]:
        """`devices.get`."""
        return self.client.call("devices.get", {"device": self.name})

    def _until(self, deadline: float, waiting_for: str, matches: Callable[[Event], bool],
               failed: Optional[Callable[[Event], bool]] = None) -> Event:
        while True:
            event = self._next_event(deadline, waiting_for)
            if matches(event):
                if failed is not None and failed(event):
                    last_error = self._last_error() or event
                    raise DeviceError("%s: %s failed" % (self.name, waiting_for), last_error)
                return event

    def close(self) -> None:
        self._subscription.close()


# MARK: The embedded simulator


class Simulator:
    """The daemon's embedded simulator: Adobe Pass, and an OAuth authorization server (RFC 8628)."""

    def __init__(self, client: Regcoded) -> None:
        self.client = client
        status = client.status()
        self.activation_url: Optional[str] = status.get("activationUrl")
        self._has_method: Optional[bool] = None

    @property
    def base_url(self) -> str:
        if not self.activation_url:
            raise RuntimeError("the daemon runs no embedded simulator (daemon.status has no activationUrl)")
        url = self.activation_url.rstrip("/")
        return url[: -len("/activate")] if url.endswith("/activate") else url

    def approve(self, code: str, mvpd: Optional[str] = None) -> Dict[str, Any]:
        """Completes the second-screen login for `code` as if a user signed in at the activation page.
        (An OAuth device's user code: `approve_oauth`.)"""
        params: Dict[str, Any] = {"code": code}
        if mvpd is not None:
            params["mvpd"] = mvpd
        if self._has_method is not False:
            try:
                result = self.client.call("simulator.approve", params)
                self._has_method = True
                return result
            except RegcodedError as error:
                if error.code != -32601:
                    raise
                self._has_method = False
        return self._post("/_sim/approve", params, "approve %s" % code)

    def approve_oauth(self, user_code: str) -> Dict[str, Any]:
        """Approves an OAuth device's `user_code` (its `oauth.codeShown`) as if the user signed in at the
        verification page: `POST /_sim/approve`; the device's next poll gets its tokens."""
        return self._post("/_sim/approve", {"code": user_code}, "approve %s" % user_code)

    def deny_oauth(self, user_code: str) -> Dict[str, Any]:
        """Denies an OAuth device's `user_code` as if the user refused: `POST /_sim/oauth/deny`; the device's
        next poll gets `access_denied` (then `oauth.denied`)."""
        return self._post("/_sim/oauth/deny", {"code": user_code}, "deny %s" % user_code)

    def _post(self, path: str, params: Dict[str, Any], what: str) -> Dict[str, Any]:
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(params).encode("utf-8"),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise RegcodedError(1006, "the simulator refused to %s: HTTP %d %s"
                                % (what, error.code, error.read().decode("utf-8", "replace")))
