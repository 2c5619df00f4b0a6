"""pytest fixtures for device labs: `regcoded`, `device`, `simulator` (and `regcoded_daemon`).

    def test_login(device, simulator):
        code = device.login()
        simulator.approve(code)
        device.wait_authenticated()
"""

import itertools
from typing import Iterator

import pytest

from .client import Regcoded
from .lab import Device, LabDaemon, Simulator, locate_binary, missing_binary_message


def pytest_addoption(parser: "pytest.Parser") -> None:
    group = parser.getgroup("regcoded")
    group.addoption(
        "--regcoded-bin",
        action="store",
        default=None,
        help="regcoded binary for the regcoded fixtures (default: $REGCODED_BIN, else regcoded on PATH, else the .build/debug or .build/release of the Swift package above the working directory).",
    )
    parser.addini("regcoded_bin", "regcoded binary for the regcoded fixtures.", default="")


def _binary(config: "pytest.Config") -> str:
    explicit = config.getoption("regcoded_bin") or config.getini("regcoded_bin") or None
    binary, tried = locate_binary(explicit)
    if binary is None:
        pytest.fail(missing_binary_message(tried), pytrace=False)
    return binary


@pytest.fixture
def regcoded_daemon(request: "pytest.FixtureRequest", tmp_path) -> Iterator[LabDaemon]:
    """A running regcoded (embedded simulator on a free port, no devices, state in tmp_path)."""
    daemon = LabDaemon(_binary(request.config), str(tmp_path))
    try:
        daemon.start()
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
    failure = None
    try:
        yield daemon
    finally:
        try:
            code = daemon.stop(timeout=10)
            if code not in (0, None):
                failure = "regcoded exited with status %s after SIGTERM:\n%s" % (code, daemon.output_tail())
        except TimeoutError as error:
            failure = str(error)
    if failure is not None:
        pytest.fail(failure, pytrace=False)


@pytest.fixture
def regcoded(regcoded_daemon: LabDaemon) -> Iterator[Regcoded]:
    """A client connected to the test's regcoded over its control socket."""
    client = regcoded_daemon.client()
    client.daemon = regcoded_daemon  # type: ignore[attr-defined]
    try:
        yield client
    finally:
        client.close()


_names = itertools.count(1)


@pytest.fixture
def device(regcoded: Regcoded) -> Iterator[Device]:
    """A fresh idle device `lab-N` on the test's regcoded."""
    name = "lab-%d" % next(_names)
    since = int(regcoded.status()["lastSeq"])
    regcoded.call("devices.add", {"device": name, "scenario": "idle"})
    lab_device = Device(regcoded, name, since)
    try:
        yield lab_device
    finally:
        lab_device.close()


@pytest.fixture
def simulator(regcoded: Regcoded) -> Simulator:
    """The embedded simulator of the test's regcoded: `approve(code, mvpd=None)`, `activation_url`."""
    return Simulator(regcoded)
