"""The client's framing, routing and reconnection against in-process fake servers (no daemon needed)."""

import os
import socket
import tempfile
import threading
import time

import pytest

from regcoded import Regcoded, RegcodedConnectionError, RegcodedError, SSEEvent, SSEParser
from regcoded.framing import decode_line, encode_line

from fakes import FakeHTTPDaemon, FakeSocketDaemon


# MARK: SSE parser


def test_sse_parser_dispatches_on_blank_lines_and_joins_data_lines():
    parser = SSEParser()
    events = parser.feed(": keep-alive\n\nid: 7\nevent: event\ndata: {\"a\":\ndata: 1}\n\n")
    assert events == [SSEEvent("event", '{"a":\n1}', "7")]
    assert events[0].json() == {"a": 1}


def test_sse_parser_handles_crlf_cr_and_missing_space():
    parser = SSEParser()
    events = parser.feed("id:3\r\nevent:cutoff\r\ndata:{\"lastSeq\":3}\r\n\r\ndata: plain\r\r")
    assert events == [SSEEvent("cutoff", '{"lastSeq":3}', "3"), SSEEvent("message", "plain", "3")]


def test_sse_parser_ignores_comments_unknown_fields_and_events_without_data():
    parser = SSEParser()
    assert parser.feed("event: lonely\n\n: just a comment\nfoo: bar\nretry: 2500\n\n") == []
    assert parser.retry_ms == 2500
    # An event name without data is dropped, and does not leak into the next event.
    assert parser.feed("data: x\n\n") == [SSEEvent("message", "x", None)]


def test_sse_parser_keeps_last_event_id_across_events_and_ignores_ids_with_nul():
    parser = SSEParser()
    parser.feed("id: 5\ndata: a\n\n")
    assert parser.feed("id: 6\0\ndata: b\n\n") == [SSEEvent("message", "b", "5")]


def test_sse_parser_feed_line_accepts_lines_with_endings():
    parser = SSEParser()
    assert parser.feed_line("data: x\r\n") is None
    assert parser.feed_line("\r\n") == SSEEvent("message", "x", None)


# MARK: JSON lines


def test_line_framing_round_trips_one_object_per_line():
    line = encode_line({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"text": "ünï\ncode"}})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode_line(line) == {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"text": "ünï\ncode"}}
    assert decode_line(b"  \r\n") is None
    with pytest.raises(ValueError):
        decode_line(b"[1,2]\n")


# MARK: Socket transport


@pytest.fixture
def fake_socket():
    fake = FakeSocketDaemon()
    yield fake
    fake.close()


def test_socket_call_returns_result_and_raises_rpc_errors(fake_socket):
    with Regcoded(socket=fake_socket.path) as client:
        assert client.call("echo", {"x": [1, 2]}) == {"x": [1, 2]}
        with pytest.raises(RegcodedError) as raised:
            client.call("fail")
        assert raised.value.code == 1001
        assert raised.value.message == "unknown device"
        assert raised.value.data == {"device": "x"}


def test_socket_replies_are_routed_by_id_to_concurrent_callers(fake_socket):
    with Regcoded(socket=fake_socket.path) as client:
        results = {}

        def hold(index):
            results[index] = client.call("hold", timeout=10)

        threads = [threading.Thread(target=hold, args=(i,)) for i in range(5)]
        for thread in threads:
            thread.start()
        # The fake answers the held calls (in reverse order) when `release` arrives; poll until all five are held.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with fake_socket.lock:
                if len(fake_socket.held) == 5:
                    break
            time.sleep(0.01)  # polling the fake's state, bounded by the deadline
        assert client.call("release") == {"count": 5}
        for thread in threads:
            thread.join(10)
        released = sorted(result["released"] for result in results.values())
        assert len(set(released)) == 5


def test_socket_call_times_out(fake_socket):
    with Regcoded(socket=fake_socket.path) as client:
        with pytest.raises(TimeoutError, match="hold"):
            client.call("hold", timeout=0.2)


def test_socket_subscription_sees_events_a_call_caused_before_its_reply(fake_socket):
    with Regcoded(socket=fake_socket.path) as client:
        subscription = client.subscribe()
        for round_ in range(10):
            client.call("emit", {"count": 3})
        seqs = [subscription.next(timeout=5)["seq"] for _ in range(30)]
        assert seqs == list(range(1, 31))
        assert subscription.last_seq == 30
        subscription.close()


def test_socket_subscription_resumes_after_cutoff_without_loss_or_duplicates():
    fake = FakeSocketDaemon(cutoff_after=4)
    try:
        with Regcoded(socket=fake.path) as client:
            subscription = client.subscribe(since=0, devices="fake-1", events=["emitted"])
            client.call("emit", {"count": 17})
            seqs = [subscription.next(timeout=5)["seq"] for _ in range(17)]
            assert seqs == list(range(1, 18))
            with pytest.raises(TimeoutError):
                subscription.next(timeout=0.3)
            assert [call["since"] for call in fake.subscribe_calls] == [0, 4, 8, 12, 16]
            assert fake.subscribe_calls[0]["devices"] == ["fake-1"]
            assert fake.subscribe_calls[0]["events"] == ["emitted"]
    finally:
        fake.close()


def test_wait_for_returns_first_match_and_times_out(fake_socket):
    with Regcoded(socket=fake_socket.path) as client:
        with client.subscribe() as subscription:
            client.call("emit", {"count": 5})
            event = subscription.wait_for(lambda e: e["seq"] == 3, timeout=5)
            assert event["seq"] == 3
            assert subscription.next(timeout=5)["seq"] == 4
            with pytest.raises(TimeoutError):
                subscription.wait_for(lambda e: e["seq"] == 99, timeout=0.3)


def test_nothing_listening_on_the_socket_names_the_path_and_the_fix():
    path = os.path.join(tempfile.mkdtemp(prefix="rc-none-"), "regcoded.sock")
    with Regcoded(socket=path) as client:
        with pytest.raises(RegcodedConnectionError) as raised:
            client.call("daemon.status")
    message = str(raised.value)
    assert path in message
    assert "nothing listens" in message and "start the daemon" in message


def test_a_stale_socket_file_reads_as_nothing_listening():
    path = os.path.join(tempfile.mkdtemp(prefix="rc-stale-"), "regcoded.sock")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)
    stale.close()
    with pytest.raises(RegcodedConnectionError, match="nothing listens on the control socket .*regcoded.sock"):
        Regcoded(socket=path).call("daemon.status")


# MARK: HTTP transport


def test_http_call_and_errors():
    fake = FakeHTTPDaemon()
    try:
        with Regcoded(url=fake.url + "/") as client:
            assert client.call("echo", {"a": 1}) == {"a": 1}
            assert client.call("echo", {"a": 2}) == {"a": 2}
            with pytest.raises(RegcodedError) as raised:
                client.call("nope")
            assert raised.value.code == 1001
    finally:
        fake.close()


def test_the_printed_console_url_carries_its_token():
    fake = FakeHTTPDaemon(token="s3cret")
    try:
        with Regcoded(url=fake.url + "/#token=s3cret") as client:
            assert client.call("echo", {"ok": True}) == {"ok": True}
            assert "s3cret" not in repr(client)
        with Regcoded(url=fake.url + "/#token=s3cret", token="wrong") as client:
            with pytest.raises(RegcodedConnectionError, match="401"):
                client.call("echo")
    finally:
        fake.close()


def test_http_token_is_sent_and_401_says_what_to_do():
    fake = FakeHTTPDaemon(token="s3cret")
    try:
        with Regcoded(url=fake.url, token="s3cret") as client:
            assert client.call("echo", {"ok": True}) == {"ok": True}
        with Regcoded(url=fake.url) as client:
            with pytest.raises(RegcodedConnectionError, match="401.*token"):
                client.call("echo")
    finally:
        fake.close()


@pytest.mark.parametrize("mode", [{"cutoff_after": 3}, {"drop_after": 3}])
def test_sse_subscription_reconnects_with_last_event_id_and_never_duplicates(mode):
    fake = FakeHTTPDaemon(**mode)
    try:
        with Regcoded(url=fake.url) as client:
            subscription = client.subscribe(devices=["fake-1", "fake-2"], events="emitted")
            client.call("emit", {"count": 10})
            seqs = [subscription.next(timeout=5)["seq"] for _ in range(10)]
            assert seqs == list(range(1, 11))
            with pytest.raises(TimeoutError):
                subscription.next(timeout=0.3)
            # Every reconnection resumed from the last event received.
            resumed = [request["last_event_id"] for request in fake.requests]
            assert resumed[:4] == ["0", "3", "6", "9"]
            assert fake.requests[0]["query"]["device"] == ["fake-1", "fake-2"]
            assert fake.requests[0]["query"]["events"] == ["emitted"]
            subscription.close()
            with pytest.raises(StopIteration):
                next(subscription)
    finally:
        fake.close()


def test_nothing_listening_at_the_url_names_it_and_the_fix():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    url = "http://127.0.0.1:%d" % port
    with pytest.raises(RegcodedConnectionError) as raised:
        Regcoded(url=url).call("daemon.status")
    assert url in str(raised.value)
    assert "--http" in str(raised.value)
