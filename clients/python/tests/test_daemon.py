"""Against a real regcoded (REGCODED_BIN): the lab fixtures, event delivery, errors and both transports."""

import os
import threading
import time

import pytest

from regcoded import DeviceError, Regcoded, RegcodedConnectionError, RegcodedError


def test_lab_login(device, simulator):
    code = device.login()
    simulator.approve(code)
    device.wait_authenticated()


def test_login_events_and_authorization(device, simulator):
    code = device.login(mvpd="Cablevision")
    assert code and code.isalnum()
    assert simulator.activation_url.endswith("/activate")
    simulator.approve(code)
    event = device.wait_authenticated()
    assert event["args"]["status"] == 1
    names = [e["name"] for e in device.events()]
    assert names.index("setRequestorComplete") < names.index("displayProviderDialog") < names.index("setAuthenticationStatus")
    selections = [e for e in device.events() if e["name"] == "sendTrackingData" and e["args"]["eventName"] == "mvpdSelection"]
    assert selections and selections[-1]["args"]["data"][0] == "Cablevision"
    assert device.authorize("REF30")

    def state():
        return next(d["state"] for d in device.client.devices() if d["device"] == device.name)

    assert state() == "authenticated"
    assert device.logout()["args"]["status"] == 0
    assert state() != "authenticated"


def test_many_devices_logging_in_while_calling_lose_no_event(regcoded, simulator):
    start = regcoded.status()["lastSeq"]
    subscription = regcoded.subscribe(since=start)
    names = ["crowd-%d" % i for i in range(20)]
    for name in names:
        regcoded.call("devices.add", {"device": name, "scenario": "idle"})
        regcoded.call("setRequestor", {"device": name})
        regcoded.call("getAuthentication", {"device": name, "mvpd": "Cablevision"})

    # Calls keep going on the same client from another thread the whole time.
    stop = threading.Event()
    background_calls = []

    def keep_calling():
        while not stop.is_set():
            regcoded.call("devices.list")
            background_calls.append(regcoded.call("daemon.status")["lastSeq"])

    caller = threading.Thread(target=keep_calling)
    caller.start()
    seqs, approved, authenticated = [], set(), set()
    try:
        deadline = time.monotonic() + 40
        while authenticated != set(names):
            event = subscription.next(timeout=max(deadline - time.monotonic(), 0.01))
            seqs.append(event["seq"])
            args = event["args"]
            if event["name"] == "status" and args["statusDictionary"].get("errorId") == "REGCODE":
                simulator.approve(args["statusDictionary"]["message"])  # a call while events keep arriving
                approved.add(event["device"])
            elif event["name"] == "setAuthenticationStatus" and args.get("status") == 1:
                authenticated.add(event["device"])
            regcoded.call("devices.get", {"device": event["device"]})
    finally:
        stop.set()
        caller.join(30)
    end = regcoded.status()["lastSeq"]
    while subscription.last_seq < end:
        seqs.append(subscription.next(timeout=10)["seq"])
    subscription.close()
    assert approved == set(names)
    assert len(background_calls) > 0
    assert seqs == list(range(start + 1, end + 1))


def test_daemon_errors_become_regcoded_errors(regcoded):
    with pytest.raises(RegcodedError) as unknown_device:
        regcoded.call("devices.get", {"device": "no-such-device"})
    assert unknown_device.value.code == 1001
    with pytest.raises(RegcodedError) as unknown_method:
        regcoded.call("no.such.method")
    assert unknown_method.value.code == -32601
    with pytest.raises(RegcodedError) as bad_params:
        regcoded.call("devices.add", {"device": "x", "scenario": "dance"})
    assert bad_params.value.code == -32602
    regcoded.call("devices.add", {"device": "twice", "scenario": "idle"})
    with pytest.raises(RegcodedError) as conflict:
        regcoded.call("devices.add", {"device": "twice", "scenario": "idle"})
    assert conflict.value.code == 1003
    # The connection is still good after errors.
    assert any(d["device"] == "twice" for d in regcoded.devices())


def test_nothing_listens_once_the_daemon_has_stopped(regcoded_daemon):
    client = regcoded_daemon.client()
    assert client.status()["starting"] is False
    assert regcoded_daemon.stop(timeout=10) == 0
    with pytest.raises(RegcodedConnectionError) as raised:
        client.call("daemon.status")
    client.close()
    with pytest.raises(RegcodedConnectionError) as fresh:
        Regcoded(socket=regcoded_daemon.socket_path).call("daemon.status")
    for error in (raised.value, fresh.value):
        assert regcoded_daemon.socket_path in str(error)
    assert "nothing listens" in str(fresh.value) and "start the daemon" in str(fresh.value)


VOLATILE_STATUS = {"uptimeSeconds", "subscribers", "requestsOutstanding", "lastSeq"}


def _needs_http(daemon):
    if daemon.http_url is None:
        pytest.skip("this regcoded has no --http listener yet (%s --help does not list it)" % daemon.binary)


def test_socket_and_url_give_the_same_answers(regcoded_daemon):
    _needs_http(regcoded_daemon)
    over_socket = regcoded_daemon.client()
    over_http = regcoded_daemon.http_client()
    try:
        # An idle device nobody drives, so its answers cannot change between the two calls.
        assert over_http.call("devices.add", {"device": "both-1", "scenario": "idle"})["device"] == "both-1"
        status_socket = {k: v for k, v in over_socket.status().items() if k not in VOLATILE_STATUS}
        status_http = {k: v for k, v in over_http.status().items() if k not in VOLATILE_STATUS}
        assert status_socket == status_http
        assert over_socket.call("devices.get", {"device": "both-1"}) == over_http.call("devices.get", {"device": "both-1"})
        assert over_socket.devices() == over_http.devices()
        errors = []
        for client in (over_socket, over_http):
            for method, params in (("devices.get", {"device": "nope"}), ("no.such.method", None),
                                   ("devices.add", {"device": "both-1", "scenario": "idle"})):
                with pytest.raises(RegcodedError) as raised:
                    client.call(method, params)
                errors.append((raised.value.code, raised.value.message, raised.value.data))
        assert errors[:3] == errors[3:]
        assert [code for code, _, _ in errors[:3]] == [1001, -32601, 1003]
    finally:
        over_socket.close()
        over_http.close()


def test_socket_and_url_subscriptions_deliver_the_same_events(regcoded_daemon):
    _needs_http(regcoded_daemon)
    over_socket = regcoded_daemon.client()
    over_http = regcoded_daemon.http_client()
    try:
        start = over_socket.status()["lastSeq"]
        socket_events = over_socket.subscribe(since=start, devices=["both-2"])
        http_events = over_http.subscribe(since=start, devices=["both-2"])
        over_http.call("devices.add", {"device": "both-2", "scenario": "idle"})
        over_socket.call("setRequestor", {"device": "both-2"})
        over_http.call("getAuthentication", {"device": "both-2", "mvpd": "Cablevision"})
        seen_socket = []

        def is_code(event):
            seen_socket.append(event)
            return event["name"] == "status" and event["args"]["statusDictionary"].get("errorId") == "REGCODE"

        code_event = socket_events.wait_for(is_code, timeout=20)
        seen_http = []
        while not seen_http or seen_http[-1]["seq"] < code_event["seq"]:
            seen_http.append(http_events.next(timeout=10))
        assert seen_http == seen_socket
        socket_events.close()
        http_events.close()
    finally:
        over_socket.close()
        over_http.close()


def test_wait_authenticated_raises_with_the_failure_event(device):
    device.login()
    device.cancel()
    with pytest.raises(DeviceError) as raised:
        device.wait_authenticated(timeout=20)
    assert raised.value.event["name"] == "setAuthenticationStatus"
    assert raised.value.event["args"]["status"] == 0
    assert raised.value.event["args"]["errorCode"] in str(raised.value)


def test_http_needs_the_token_the_daemon_wrote_beside_its_socket(regcoded_daemon):
    _needs_http(regcoded_daemon)
    assert os.stat(regcoded_daemon.http_token_path).st_mode & 0o777 == 0o600
    with Regcoded(url=regcoded_daemon.http_url) as bare:
        with pytest.raises(RegcodedConnectionError, match="401"):
            bare.call("daemon.status")
    with regcoded_daemon.http_client() as client:
        assert "version" in client.status()
