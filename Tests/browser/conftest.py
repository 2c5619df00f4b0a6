"""Fixtures for the web console's browser tests.

A real `regcoded` (from $REGCODED_BIN) runs in a temporary directory with no devices, its HTTP lab
surface on a free loopback port and the embedded simulator on another free port; a headless Chromium
(through chromium-driver) opens its console.
"""

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

CONSOLE_PREFIX = "regcoded: console: "
START_DEADLINE_S = 90
STOP_DEADLINE_S = 60


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, process, url, workdir, lines, log):
        self.process = process
        self.url = url
        self.workdir = workdir
        self.lines = lines
        self.log = log
        self.token = None
        # The URL as printed: with the generated token in its fragment, the console needs no prompt.
        self.console_url = url
        self._ids = 0
        # Loopback only: never through a proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def call(self, method, params=None, token=None):
        """One JSON-RPC call over POST /rpc; returns the whole response object."""
        self._ids += 1
        body = {"jsonrpc": "2.0", "id": self._ids, "method": method}
        if params is not None:
            body["params"] = params
        headers = {"Content-Type": "application/json"}
        token = token or self.token
        if token:
            headers["Authorization"] = "Bearer " + token
        request = urllib.request.Request(self.url + "rpc", data=json.dumps(body).encode(), headers=headers, method="POST")
        with self._opener.open(request, timeout=30) as response:
            assert response.status == 200
            return json.loads(response.read())

    def rpc(self, method, params=None):
        """A call that must succeed; returns its result."""
        answer = self.call(method, params)
        assert "error" not in answer, f"{method} failed: {answer['error']}"
        return answer["result"]


def start_daemon(extra_args=(), token=None):
    """Starts regcoded in a new temporary directory and returns it once it answers over HTTP."""
    binary = os.environ.get("REGCODED_BIN")
    if not binary:
        pytest.fail("set REGCODED_BIN to the regcoded executable (Tests/browser/run-tests.sh does)")
    workdir = tempfile.mkdtemp(prefix="regcoded-console-")
    simulator_port = free_port()
    log = open(os.path.join(workdir, "regcoded.stderr"), "w")
    process = subprocess.Popen(
        [
            binary,
            "--devices", "0",
            "--http", "127.0.0.1:0",
            "--database", os.path.join(workdir, "regcoded.sqlite"),
            "--socket", os.path.join(workdir, "regcoded.sock"),
            "--simulator-listen", f"127.0.0.1:{simulator_port}",
            "--poll-interval", "3s",
            *extra_args,
        ],
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    lines = queue.Queue()

    def drain():
        # Keep reading so the daemon never blocks on a full pipe.
        for line in process.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    url = None
    deadline = time.monotonic() + START_DEADLINE_S
    seen = []
    while url is None:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if line.startswith(CONSOLE_PREFIX):
            url = line[len(CONSOLE_PREFIX):].strip()
    if url is None:
        process.kill()
        process.wait()
        log.close()
        stderr = open(os.path.join(workdir, "regcoded.stderr")).read()
        pytest.fail(f"regcoded printed no console URL (exit {process.returncode}).\nstdout: {seen}\nstderr: {stderr[-4000:]}")
    # The daemon prints the token it generated in the URL's fragment (`…/#token=…`), as the console takes it.
    console_url = url
    url, _, fragment = url.partition("#")
    printed = fragment[len("token="):] if fragment.startswith("token=") else None
    if not url.endswith("/"):
        url += "/"
    daemon = Daemon(process, url, workdir, lines, log)
    daemon.token = token or printed
    daemon.console_url = console_url if printed else url
    # Devices can be added once the daemon is past its start.
    deadline = time.monotonic() + START_DEADLINE_S
    while daemon.rpc("daemon.status").get("starting"):
        assert time.monotonic() < deadline, "regcoded stayed 'starting'"
        time.sleep(0.1)
    return daemon


def stop_daemon(daemon):
    """SIGTERM, then the daemon must exit 0."""
    daemon.process.send_signal(signal.SIGTERM)
    try:
        code = daemon.process.wait(timeout=STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        daemon.process.kill()
        daemon.process.wait()
        code = None
    daemon.log.close()
    if code == 0:
        shutil.rmtree(daemon.workdir, ignore_errors=True)
    assert code == 0, f"regcoded did not stop cleanly on SIGTERM (exit {code}); its files are in {daemon.workdir}"


@pytest.fixture(scope="session")
def regcoded():
    daemon = start_daemon()
    yield daemon
    stop_daemon(daemon)


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def browser_log():
    """Every browser console entry seen during the session."""
    return []


@pytest.fixture(scope="session")
def driver(browser_log):
    options = Options()
    binary = chromium_binary()
    if binary:
        options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-proxy-server",
        "--window-size=1280,900",
        "--lang=en-US",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chromedriver = shutil.which("chromedriver")
    if not chromedriver:
        pytest.fail("chromedriver not found (apt-get install chromium-driver)")
    browser = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    browser.set_page_load_timeout(30)
    yield browser
    try:
        browser_log.extend(browser.get_log("browser"))
    finally:
        browser.quit()


@pytest.fixture
def screenshots():
    directory = os.environ.get("TMPDIR") or tempfile.gettempdir()
    os.makedirs(directory, exist_ok=True)

    def save(driver, name):
        path = os.path.join(directory, f"regcoded-console-{name}.png")
        driver.save_screenshot(path)
        return path

    return save
