"""pytest fixtures for device labs: `regcoded`, `device`, `oauth_device`, `simulator` (and `regcoded_daemon`),
and the marker `regcoded_args` (extra command-line arguments for the test's daemon).

    def test_login(device, simulator):
        code = device.login()
        simulator.approve(code)
        device.wait_authenticated()

    def test_oauth_login(oauth_device, simulator):
        shown = oauth_device.oauth_login()
        simulator.approve_oauth(shown["user_code"])
        oauth_device.wait_oauth_authorized()
"""

import itertools
from typing import Iterator, List

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


def pytest_configure(config: "pytest.Config") -> None:
    config.addinivalue_line(
        "markers",
        "regcoded_args(*args): extra command-line arguments for the test's regcoded, after the lab's own "
        "(e.g. '--protocol', 'oauth-device', '--simulator-auto-approve-after', '2s').",
    )


def _extra_args(request: "pytest.FixtureRequest") -> List[str]:
    """The `regcoded_args` markers' arguments, outermost (module, class) first."""
    args: List[str] = []
    for marker in reversed(list(request.node.iter_markers("regcoded_args"))):
        args.extend(str(arg) for arg in marker.args)
    return args


def _binary(config: "pytest.Config") -> str:
    explicit = config.getoption("regcoded_bin") or config.getini("regcoded_bin") or None
    binary, tried = locate_binary(explicit)
    if binary is None:
        pytest.fail(missing_binary_message(tried), pytrace=False)
    return binary


@pytest.fixture
def regcoded_daemon(request: "pytest.FixtureRequest", tmp_path) -> Iterator[LabDaemon]:
    """A running regcoded (embedded simulator on a free port, no devices, state in tmp_path), with the
    arguments of the test's `regcoded_args` markers."""
    daemon = LabDaemon(_binary(request.config), str(tmp_path), extra_args=_extra_args(request))
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


def _idle_device(regcoded: Regcoded, prefix: str, **params: str) -> Device:
    name = "%s-%d" % (prefix, next(_names))
    since = int(regcoded.status()["lastSeq"])
    regcoded.call("devices.add", dict(params, device=name, scenario="idle"))
    return Device(regcoded, name, since)


@pytest.fixture
def device(regcoded: Regcoded) -> Iterator[Device]:
    """A fresh idle device `lab-N` on the test's regcoded, of the daemon's protocol (an OAuth device under
    `@pytest.mark.regcoded_args("--protocol", "oauth-device")`)."""
    lab_device = _idle_device(regcoded, "lab")
    try:
        yield lab_device
    finally:
        lab_device.close()


@pytest.fixture
def oauth_device(regcoded: Regcoded) -> Iterator[Device]:
    """A fresh idle OAuth device `oauth-N` (`protocol: oauth-device`, RFC 8628) on the test's regcoded:
    `oauth_login()`, `wait_oauth_authorized()`, `oauth_logout()`, `oauth_cancel()`."""
    lab_device = _idle_device(regcoded, "oauth", protocol="oauth-device")
    try:
        yield lab_device
    finally:
        lab_device.close()


@pytest.fixture
def simulator(regcoded: Regcoded) -> Simulator:
    """The embedded simulator of the test's regcoded: `approve(code, mvpd=None)`, `approve_oauth(user_code)`,
    `deny_oauth(user_code)`, `activation_url`."""
    return Simulator(regcoded)
