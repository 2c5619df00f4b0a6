"""OAuth devices (RFC 8628) against a real regcoded (REGCODED_BIN): the lab helpers, refusals and both transports."""

import json
import urllib.request

import pytest

from regcoded import DeviceError, RegcodedError, Simulator

OAUTH_LOGIN_EVENTS = ["oauth.discovered", "oauth.codeShown", "oauth.poll", "oauth.authorized"]


def _approve_over_http(simulator, user_code):
    """The simulator's own hook, as a harness without this client would call it."""
    request = urllib.request.Request(
        simulator.base_url + "/_sim/approve",
        data=json.dumps({"code": user_code}).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.loads(response.read())


def test_oauth_login_approve_and_logout(oauth_device, simulator):
    assert oauth_device.get()["protocol"] == "oauth-device"
    shown = oauth_device.oauth_login()
    assert set(shown) >= {"user_code", "verification_uri", "verification_uri_complete", "expires_in",
                          "expires_at", "interval", "message"}
    assert shown["verification_uri"].startswith(simulator.base_url)
    assert shown["user_code"] in shown["verification_uri_complete"]
    assert shown["expires_in"] > 0 and shown["interval"] > 0
    status, approved = _approve_over_http(simulator, shown["user_code"])
    assert status == 200 and approved["status"] == "approved"

    authorized = oauth_device.wait_oauth_authorized(timeout=30)
    assert authorized["args"]["refreshable"] is True and authorized["args"]["expires_in"] > 0
    assert oauth_device.get()["state"] == "authenticated"
    with pytest.raises(DeviceError, match="already authorized"):
        oauth_device.oauth_login()

    revoked = oauth_device.oauth_logout()
    assert revoked and [e["args"]["status"] for e in revoked] == [200] * len(revoked)
    assert {e["args"]["token_type_hint"] for e in revoked} <= {"access_token", "refresh_token"}
    assert oauth_device.get()["state"] != "authenticated"
    names = [e["name"] for e in oauth_device.events()]
    assert [n for n in names if n in OAUTH_LOGIN_EVENTS][:2] == ["oauth.discovered", "oauth.codeShown"]
    assert names.index("oauth.authorized") < names.index("oauth.revoked") < names.index("oauth.loggedOut")
    assert all(n.startswith("oauth.") for n in names)

    # Logged out, it signs in again; a second logout with no grant revokes nothing.
    again = oauth_device.oauth_login()
    assert again["user_code"] != shown["user_code"]
    simulator.approve_oauth(again["user_code"])
    oauth_device.wait_oauth_authorized(timeout=30)
    assert oauth_device.oauth_logout()
    assert oauth_device.oauth_logout() == []


def test_accessenabler_calls_on_an_oauth_device_are_refused(oauth_device, device):
    with pytest.raises(RegcodedError) as login:
        oauth_device.login()
    assert login.value.code == -32602
    assert "OAuth device" in login.value.message and login.value.data == {"protocol": "oauth-device"}
    for method, params in (("getAuthorization", {"resource": "REF30"}), ("logout", None),
                           ("setSelectedProvider", {"mvpd": None})):
        with pytest.raises(RegcodedError) as raised:
            oauth_device.call(method, params)
        assert raised.value.code == -32602, method
    # And the other way round: an Adobe Pass device refuses the OAuth verbs.
    with pytest.raises(RegcodedError) as verb:
        device.oauth_login()
    assert verb.value.code == -32602 and verb.value.data == {"protocol": "adobe-pass"}
    # The refused calls changed nothing: the OAuth device still logs in.
    assert oauth_device.oauth_login()["user_code"]


def test_wait_oauth_authorized_raises_when_the_user_denies(oauth_device, simulator):
    shown = oauth_device.oauth_login()
    assert simulator.deny_oauth(shown["user_code"])["status"] == "denied"
    with pytest.raises(DeviceError) as raised:
        oauth_device.wait_oauth_authorized(timeout=30)
    assert raised.value.event["name"] == "oauth.denied"
    assert raised.value.event["args"]["error"] == "access_denied"
    assert "access_denied" in str(raised.value)
    # A denial is an error event: a later wait that times out names it.
    with pytest.raises(TimeoutError, match="oauth.denied"):
        oauth_device.wait_event(lambda e: False, timeout=0.5, waiting_for="nothing")


def test_oauth_cancel_ends_the_wait(oauth_device, simulator):
    shown = oauth_device.oauth_login()
    oauth_device.oauth_cancel()
    with pytest.raises(DeviceError) as raised:
        oauth_device.wait_oauth_authorized(timeout=30)
    assert raised.value.event["name"] == "oauth.cancelled"
    with pytest.raises(RegcodedError):
        simulator.approve_oauth("BCDF-GHJK")  # never issued
    assert shown["user_code"]


@pytest.mark.regcoded_args("--protocol", "oauth-device", "--simulator-auto-approve-after", "1s")
def test_a_lab_started_with_protocol_oauth_device(device, regcoded):
    # Under the marker the plain `device` fixture is an OAuth device, and codes approve themselves.
    regcoded.call("devices.add", {"device": "by-default"})  # the `login` scenario: it signs in at start
    started = regcoded.subscribe(since=0, devices=["by-default"])
    assert device.get()["protocol"] == "oauth-device"
    assert device.oauth_login()["user_code"]
    assert device.wait_oauth_authorized(timeout=30)["name"] == "oauth.authorized"
    try:
        assert started.wait_for(lambda e: e["name"] == "oauth.authorized", timeout=30)["device"] == "by-default"
    finally:
        started.close()


def test_socket_and_url_subscriptions_deliver_the_same_oauth_events(regcoded_daemon):
    if regcoded_daemon.http_url is None:
        pytest.skip("this regcoded has no --http listener (%s --help does not list it)" % regcoded_daemon.binary)
    over_socket = regcoded_daemon.client()
    over_http = regcoded_daemon.http_client()
    try:
        start = over_socket.status()["lastSeq"]
        socket_events = over_socket.subscribe(since=start, devices=["tv-1"])
        http_events = over_http.subscribe(since=start, devices=["tv-1"])
        over_http.call("devices.add", {"device": "tv-1", "protocol": "oauth-device", "scenario": "idle"})
        over_socket.call("oauth.login", {"device": "tv-1"})
        simulator = Simulator(over_socket)
        seen_socket = []

        def until_authorized(event):
            seen_socket.append(event)
            if event["name"] == "oauth.codeShown":
                simulator.approve_oauth(event["args"]["user_code"])
            return event["name"] == "oauth.authorized"

        authorized = socket_events.wait_for(until_authorized, timeout=30)
        seen_http = []
        while not seen_http or seen_http[-1]["seq"] < authorized["seq"]:
            seen_http.append(http_events.next(timeout=10))
        assert seen_http == seen_socket
        names = [e["name"] for e in seen_socket]
        assert [n for n in OAUTH_LOGIN_EVENTS if n in names] == OAUTH_LOGIN_EVENTS
        assert all(n.startswith("oauth.") for n in names)
        socket_events.close()
        http_events.close()
    finally:
        over_socket.close()
        over_http.close()

