"""One Locust user = one regcoded device against pass-sim (REST v2): register a DCR client, get an access token,
create a session (a code), then poll GET profiles/code/{code} every INTERVAL s ±10 %, as regcoded's
default policy does: the first poll at once, each next poll planned INTERVAL·U(0.9, 1.1) after the previous
*planned* time (never in the past). Every poll is recorded with its planned and sent times so lateness
(sent − planned) compares with regcoded's poll_attempts.

Environment: BENCH_OUT (directory for locust-polls-<pid>.csv, written when the process quits),
BENCH_INTERVAL (5), BENCH_REQUESTOR (REF30), BENCH_MVPD (Cablevision), BENCH_CA (over HTTPS: the CA that issued
pass-sim's certificate, checked as regcoded checks it; geventhttpclient speaks HTTP/1.1 only).

    locust -f Benchmarks/locust/locustfile.py --headless -u 500 -r 100 -t 60s --host http://127.0.0.1:8080
"""
import base64
import itertools
import json
import os
import random
import ssl
import time

from locust import FastHttpUser, events, task

INTERVAL = float(os.environ.get("BENCH_INTERVAL", "5"))
REQUESTOR = os.environ.get("BENCH_REQUESTOR", "REF30")
MVPD = os.environ.get("BENCH_MVPD", "Cablevision")
OUT = os.environ.get("BENCH_OUT")
CA = os.environ.get("BENCH_CA") or None
# The software statement pass-sim issued for the run (bench_start_sim: `pass-sim statement`), as regcoded gets it.
with open(os.environ.get("BENCH_STATEMENT", "software-statement")) as _statement:
    STATEMENT = _statement.read().strip()
DEVICE_INFO = base64.b64encode(json.dumps({"model": "AppleTV", "osName": "tvOS", "osVersion": "17.0"}).encode()).decode()

_numbers = itertools.count()
_records = []  # (planned epoch ms, sent epoch ms, HTTP status) of every poll of this process


class Device(FastHttpUser):
    if CA:
        # Certificates are checked, as regcoded checks them (FastHttpUser's default is not to).
        insecure = False
        ssl_context_factory = staticmethod(lambda: ssl.create_default_context(cafile=CA))

    def wait_time(self):
        return max(0.0, self.next_poll - time.time())

    def on_start(self):
        number = next(_numbers) + (os.getpid() % 1000) * 100_000
        self.device_name = f"locust-{os.getpid()}-{number}"
        # Its own client address, as regcoded's devices have (a throttled pass-sim keys its bucket by it).
        address = 1 + number % ((1 << 24) - 2)
        common = {"X-Device-Info": DEVICE_INFO, "X-Forwarded-For": f"10.{address >> 16 & 255}.{address >> 8 & 255}.{address & 255}"}
        self.code = None
        self.next_poll = time.time() + 3600
        answer = self.client.post("/o/client/register", name="register",
                                  headers=common | {"Content-Type": "application/json"},
                                  data=json.dumps({"software_statement": STATEMENT, "redirect_uri": "adobepass://ios.app"}))
        if answer.status_code != 201:
            return
        client = answer.json()
        answer = self.client.post("/o/client/token", name="token",
                                  headers=common | {"Content-Type": "application/x-www-form-urlencoded"},
                                  data=f"client_id={client['client_id']}&client_secret={client['client_secret']}&grant_type=client_credentials")
        if answer.status_code != 201:
            return
        device_id = base64.b64encode(self.device_name.encode()).decode()
        self.headers = common | {"Authorization": f"Bearer {answer.json()['access_token']}",
                                 "AP-Device-Identifier": f"fingerprint {device_id}"}
        answer = self.client.post(f"/api/v2/{REQUESTOR}/sessions", name="session",
                                  headers=self.headers | {"Content-Type": "application/x-www-form-urlencoded"},
                                  data=f"mvpd={MVPD}&domainName=adobe.com&redirectUrl=https%3A%2F%2Fadobe.com")
        if answer.status_code != 200:
            return
        self.code = answer.json()["code"]
        # What regcoded sends on a poll: bearer token, device id, X-Device-Info, Accept, X-Forwarded-For.
        self.poll_headers = self.headers | {"Accept": "application/json"}
        self.next_poll = time.time()  # the first poll at once

    @task
    def poll(self):
        if self.code is None:
            self.next_poll = time.time() + 3600
            return
        planned = self.next_poll
        sent = time.time()
        answer = self.client.get(f"/api/v2/{REQUESTOR}/profiles/code/{self.code}", name="poll", headers=self.poll_headers)
        _records.append((int(planned * 1000), int(sent * 1000), answer.status_code))
        self.next_poll = max(planned + INTERVAL * random.uniform(0.9, 1.1), time.time())


@events.quitting.add_listener
def write_records(environment, **_):
    if not OUT or not _records:
        return
    with open(os.path.join(OUT, f"locust-polls-{os.getpid()}.csv"), "w") as f:
        f.writelines(f"{planned},{sent},{status}\n" for planned, sent, status in _records)
