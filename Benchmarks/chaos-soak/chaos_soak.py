#!/usr/bin/env python3
"""Chaos soak for regcoded: a fleet runs against pass-sim while faults are injected at random moments
(daemon SIGKILL, backend restart, database write lock, disk full), then the database and the event
stream a socket subscriber received are checked for integrity.

    Benchmarks/chaos-soak/chaos_soak.py [--duration 1800] [--devices 200] [--fault-every 45]
                                        [--settle 120] [--seed N] [--bin DIR] [--workdir DIR] [--port P]

Loopback only; every loop is bounded. Exit status 1 if any check fails, 2 on a setup error.
Python 3 standard library only.
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def now_ms():
    return int(time.time() * 1000)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class SetupError(Exception):
    pass


class Children:
    """Every child process started, so that all of them can be ended on exit or error."""

    def __init__(self):
        self.procs = []

    def add(self, proc):
        self.procs.append(proc)
        return proc

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGCONT)
                except OSError:
                    pass
                try:
                    p.kill()
                except OSError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def wait_for_text(path, text, proc, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path, "r", errors="replace") as f:
                if text in f.read():
                    return True
        except FileNotFoundError:
            pass
        if proc.poll() is not None:
            return False
        time.sleep(0.1)
    return False


def rpc_call(sock_path, method, params=None, timeout=5.0, rid=1):
    """One JSON-RPC call on a fresh connection; returns the decoded answer or None."""
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(sock_path)
        s.sendall((json.dumps(msg) + "\n").encode())
        buf = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if not line.strip():
                    continue
                obj = json.loads(line)
                if obj.get("id") == rid:
                    return obj
        return None
    except (OSError, ValueError):
        return None
    finally:
        s.close()


class Subscriber(threading.Thread):
    """Subscribes to events, resuming after the last seq seen whenever the connection drops."""

    def __init__(self, sock_path):
        super().__init__(daemon=True)
        self.sock_path = sock_path
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.received = []          # every seq, in arrival order, over all connections
        self.last = 0
        self.connections = 0        # subscriptions answered with a result
        self.cutoffs = 0
        self.starting_retries = 0
        self.errors = []            # other JSON-RPC errors
        self.resumes = []           # since values used

    def run(self):
        backoff = 0.1
        # Bounded: ends when stop_event is set; every wait below has a timeout.
        while not self.stop_event.is_set():
            got_any = self._session()
            if self.stop_event.is_set():
                break
            backoff = 0.1 if got_any else min(backoff * 2, 2.0)
            self.stop_event.wait(backoff)

    def _session(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(0.5)
        progressed = False
        try:
            s.connect(self.sock_path)
            since = self.last
            s.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscribe",
                                   "params": {"since": since}}) + "\n").encode())
            buf = b""
            while not self.stop_event.is_set():
                try:
                    chunk = s.recv(262144)
                except socket.timeout:
                    continue
                if not chunk:
                    return progressed
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except ValueError:
                        self.errors.append(f"bad line: {line[:200]!r}")
                        return progressed
                    method = obj.get("method")
                    if method == "event":
                        seq = obj.get("params", {}).get("seq")
                        if isinstance(seq, int):
                            with self.lock:
                                self.received.append(seq)
                                self.last = max(self.last, seq)
                            progressed = True
                    elif method == "cutoff":
                        self.cutoffs += 1
                        return progressed
                    elif "error" in obj:
                        err = obj["error"] or {}
                        if err.get("code") == 1004:
                            self.starting_retries += 1
                            time.sleep(0.3)
                            return True
                        self.errors.append(err)
                        return progressed
                    elif "result" in obj:
                        self.connections += 1
                        self.resumes.append(since)
                        progressed = True
            return progressed
        except OSError:
            return progressed
        finally:
            s.close()


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.children = Children()
        self.bin = args.bin
        self.workdir = args.workdir
        self.dbdir = os.path.join(self.workdir, "db")
        self.db = os.path.join(self.dbdir, "regcoded.sqlite")
        self.sock = os.path.join(self.workdir, "regcoded.sock")
        self.config = os.path.join(self.workdir, "regcoded.yaml")
        self.statement_key = os.path.join(self.workdir, "statement-key.pem")
        self.port = args.port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.mounted = False
        self.disk_full_enabled = False
        self.daemon = None
        self.sim = None
        self.daemon_lives = 0
        self.sim_lives = 0
        self.answered_prior_lives = 0     # answered polls of pass-sim lives already ended
        self.sim_kill_times_ms = []       # wall clock of each pass-sim SIGKILL
        self.sim_start_times_ms = []
        self.faults = {"daemon-kill": 0, "sim-restart": 0, "db-lock": 0, "disk-full": 0}
        self.fault_log = []
        self.last_fault_end_ms = None
        self.storage_obs = []             # per storage fault: (failing observations, total observations)
        self.storage_states = {}
        self.snapshot = None              # (answered, stored, label) when no daemon runs
        self.daemon_exit = None
        self.final_answered = None
        self.subscriber = None

    # ---- processes -------------------------------------------------------------------------

    def start_sim(self):
        self.sim_lives += 1
        path = os.path.join(self.workdir, f"pass-sim-{self.sim_lives}.log")
        out = open(path, "w")
        deadline = time.monotonic() + 30
        while True:  # bounded by deadline: the port may still be held for a moment after a kill
            proc = self.children.add(subprocess.Popen(
                [os.path.join(self.bin, "pass-sim"), "--listen", f"127.0.0.1:{self.port}",
                 "--statement-key", self.statement_key, "--auto-approve-after", "5s"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
            if wait_for_text(path, f"activation page: http://127.0.0.1:{self.port}/activate", proc, 15):
                break
            proc.kill()
            proc.wait()
            if time.monotonic() > deadline:
                raise SetupError(f"pass-sim did not start, see {path}")
            time.sleep(1)
        out.close()
        self.sim = proc
        self.sim_start_times_ms.append(now_ms())

    def start_daemon(self):
        self.daemon_lives += 1
        path = os.path.join(self.workdir, f"regcoded-{self.daemon_lives}.log")
        out = open(path, "w")
        proc = self.children.add(subprocess.Popen(
            [os.path.join(self.bin, "regcoded"), "--config", self.config, "--database", self.db,
             "--socket", self.sock],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        out.close()
        self.daemon = proc
        if not wait_for_text(path, "regcoded ready", proc, 120):
            raise SetupError(f"regcoded did not become ready (exit {proc.poll()}), see {path}")

    def sim_answered(self):
        """Answered polls of the running pass-sim life (None if it does not answer)."""
        try:
            with urllib.request.urlopen(self.base + "/_sim/stats", timeout=10) as r:
                stats = json.loads(r.read())
        except (OSError, ValueError):
            return None
        polls = stats.get("requests", {}).get("poll", {}) or {}
        return sum(v for k, v in polls.items() if k != "dropped")

    def stored_polls(self):
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            return con.execute("SELECT count(*) FROM poll_attempts WHERE http_status IS NOT NULL").fetchone()[0]
        finally:
            con.close()

    # ---- faults ----------------------------------------------------------------------------

    def fault_daemon_kill(self):
        self.daemon.kill()
        self.daemon.wait()
        # No daemon runs: the answered and stored counts are both final for now.
        answered = self.sim_answered()
        if answered is None:
            raise SetupError("pass-sim did not answer /_sim/stats")
        self.snapshot = (self.answered_prior_lives + answered, self.stored_polls(),
                         f"after daemon kill #{self.faults['daemon-kill'] + 1}")
        time.sleep(self.rng.uniform(1, 3))
        self.start_daemon()
        return f"daemon life {self.daemon_lives}"

    def fault_sim_restart(self):
        self.daemon.send_signal(signal.SIGSTOP)
        try:
            time.sleep(1)
            answered = self.sim_answered()
            if answered is None:
                raise SetupError("pass-sim did not answer /_sim/stats")
            self.answered_prior_lives += answered
            self.sim.kill()
            self.sim.wait()
            self.sim_kill_times_ms.append(now_ms())
        finally:
            self.daemon.send_signal(signal.SIGCONT)
        time.sleep(2)
        self.start_sim()
        return f"life answered {answered}"

    def observe_storage(self, hold):
        """Holds for `hold` seconds, asking daemon.status every 2 s."""
        failing = total = 0
        end = time.monotonic() + hold
        rid = 100
        while time.monotonic() < end:
            rid += 1
            ans = rpc_call(self.sock, "daemon.status", rid=rid, timeout=3)
            state = None
            if ans and isinstance(ans.get("result"), dict):
                state = (ans["result"].get("storage") or {}).get("state")
            state = state or "no-answer"
            self.storage_states[state] = self.storage_states.get(state, 0) + 1
            total += 1
            if state == "failing":
                failing += 1
            time.sleep(max(0, min(2, end - time.monotonic())))
        self.storage_obs.append((failing, total))
        return f"status failing {failing}/{total}"

    def fault_db_lock(self):
        hold = self.rng.uniform(5, 30)
        proc = self.children.add(subprocess.Popen(
            ["sqlite3", self.db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1))
        try:
            proc.stdin.write("PRAGMA busy_timeout=10000;\nBEGIN EXCLUSIVE;\nSELECT 'held';\n")
            proc.stdin.flush()
            # The CLI echoes the busy_timeout value first; read lines until 'held' (bounded: 30 s).
            got = []

            def reader():
                for _ in range(10):
                    line = proc.stdout.readline()
                    if not line:
                        return
                    got.append(line.strip())
                    if got[-1] == "held":
                        return
            holder = threading.Thread(target=reader, daemon=True)
            holder.start()
            holder.join(30)
            if "held" not in got:
                return f"lock not taken ({got!r})"
            obs = self.observe_storage(hold)
            proc.stdin.write("COMMIT;\n.quit\n")
            proc.stdin.flush()
            proc.wait(timeout=30)
            return f"held {hold:.1f}s, {obs}"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def fault_disk_full(self):
        hold = self.rng.uniform(5, 30)
        filler = os.path.join(self.dbdir, "filler")
        proc = self.children.add(subprocess.Popen(
            ["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
        try:
            proc.wait(timeout=120)
            st = os.statvfs(self.dbdir)
            obs = self.observe_storage(hold)
            return f"filled (free {st.f_bavail * st.f_frsize} B), held {hold:.1f}s, {obs}"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            try:
                os.unlink(filler)
            except FileNotFoundError:
                pass

    # ---- run -------------------------------------------------------------------------------

    def setup(self):
        os.makedirs(self.dbdir, exist_ok=True)
        if os.geteuid() == 0:
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", self.dbdir],
                               capture_output=True, text=True)
            if r.returncode == 0:
                self.mounted = True
                self.disk_full_enabled = True
            else:
                log(f"mount failed ({r.stderr.strip()}): disk-full faults disabled")
        else:
            log("not root: no tmpfs, disk-full faults disabled")
        # Every pass-sim life checks statements with the same key, so the daemon's statement outlives kills.
        statement = os.path.join(self.workdir, "software-statement")
        with open(statement, "w") as f:
            subprocess.run([os.path.join(self.bin, "pass-sim"), "statement", "--statement-key", self.statement_key,
                            "--software-id", "regcoded-chaos"], stdout=f, check=True)
        with open(self.config, "w") as f:
            f.write(f"""backend: {self.base}
fleets:
  - name: chaos
    count: {self.args.devices}
    software_statement_file: {statement}
    scenario: cycle
    poll:
      interval: 3s
    cycle:
      hold: 20s
      authorize_every: 5s
      resource: REF30
""")

    def run(self):
        a = self.args
        self.setup()
        log(f"workdir {self.workdir}, port {self.port}, tmpfs {'yes' if self.mounted else 'no'}")
        self.start_sim()
        self.snapshot = (0, 0, "before the first start")
        self.run_start_ms = now_ms()
        self.start_daemon()
        self.subscriber = Subscriber(self.sock)
        self.subscriber.start()
        kinds = ["daemon-kill", "sim-restart", "db-lock"] + (["disk-full"] if self.disk_full_enabled else [])
        end = time.monotonic() + a.duration
        next_fault = time.monotonic() + self.rng.expovariate(1 / a.fault_every)
        while time.monotonic() < end:
            time.sleep(max(0, min(next_fault, end) - time.monotonic()))
            if time.monotonic() >= end:
                break
            if self.daemon.poll() is not None:
                raise SetupError(f"regcoded exited on its own with {self.daemon.returncode}")
            kind = self.rng.choice(kinds)
            log(f"fault {kind} ...")
            t0 = now_ms()
            detail = getattr(self, "fault_" + kind.replace("-", "_"))()
            self.faults[kind] += 1
            self.last_fault_end_ms = now_ms()
            self.fault_log.append((kind, t0, self.last_fault_end_ms, detail))
            log(f"fault {kind} done ({(self.last_fault_end_ms - t0) / 1000:.1f}s): {detail}")
            next_fault = time.monotonic() + self.rng.expovariate(1 / a.fault_every)
        if self.last_fault_end_ms is None:
            self.last_fault_end_ms = self.run_start_ms
        log(f"no more faults; settling {a.settle}s")
        time.sleep(a.settle)
        self.daemon.send_signal(signal.SIGTERM)
        try:
            self.daemon_exit = self.daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            self.daemon_exit = f"none in 60 s (killed: {self.daemon.wait()})"
        log(f"regcoded exited: {self.daemon_exit}")
        answered = self.sim_answered()
        self.final_answered = None if answered is None else self.answered_prior_lives + answered
        self.subscriber.stop_event.set()
        self.subscriber.join(10)
        self.sim.send_signal(signal.SIGTERM)
        try:
            self.sim.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.sim.kill()
            self.sim.wait()

    # ---- checks ----------------------------------------------------------------------------

    def check(self):
        a = self.args
        results = []

        def verdict(name, ok, figures):
            results.append(ok)
            print(f"{'PASS' if ok else 'FAIL'}  {name}: {figures}")

        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        q = lambda sql, *p: con.execute(sql, p).fetchall()

        ic = q("PRAGMA integrity_check")
        verdict("integrity_check", ic == [("ok",)], ic[:5])

        seqs = [r[0] for r in q("SELECT seq FROM events ORDER BY seq")]
        n_events = len(seqs)
        gapfree = seqs == list(range(1, n_events + 1))
        first_bad = next((i + 1 for i, s in enumerate(seqs) if s != i + 1), None)
        verdict("events gap-free", gapfree,
                f"{n_events} events, max seq {seqs[-1] if seqs else 0}"
                + ("" if gapfree else f", first mismatch at position {first_bad}"))

        # Identical rows are legitimate in one case: a device that starts (after a restart) with a stored
        # login runs setRequestor, checkAuthentication and getAuthentication; the last two are separate
        # calls that both answer setAuthenticationStatus(1) + the authenticationDetection tracking event
        # in the same millisecond, right after setRequestorComplete. Exactly such pairs are counted as
        # explained; any other identical rows fail.
        dup_events = q("SELECT device, time, name, args, count(*) FROM events "
                       "GROUP BY device, time, name, args HAVING count(*) > 1")
        explained, unexplained = [], []
        for dev, t, name, args_, count in dup_events:
            start_pair = count == 2 and (
                (name == "setAuthenticationStatus" and json.loads(args_).get("status") == 1)
                or (name == "sendTrackingData" and json.loads(args_).get("eventName") == "authenticationDetection"))
            if start_pair and q("SELECT 1 FROM events WHERE device=? AND name='setRequestorComplete' "
                                "AND time BETWEEN ? AND ? LIMIT 1", dev, t - 1000, t):
                explained.append((dev, t, name))
            else:
                unexplained.append((dev, t, name, args_, count))
        verdict("no duplicated events", not unexplained,
                f"{len(unexplained)} duplicated groups"
                + (f", e.g. {unexplained[:3]}" if unexplained else "")
                + f" ({len(explained)} identical pairs from checkAuthentication + getAuthentication at a "
                  f"restart with a stored login, not counted)")

        sub = self.subscriber
        rec = list(sub.received)
        increasing = all(rec[i] < rec[i + 1] for i in range(len(rec) - 1))
        seqset = set(seqs)
        missing_in_db = [s for s in rec if s not in seqset]
        max_rec = max(rec) if rec else 0
        contiguous = set(rec) == set(range(1, max_rec + 1))
        not_delivered = sorted(set(range(1, max_rec + 1)) - set(rec))
        ok = increasing and not missing_in_db and contiguous and len(rec) == len(set(rec))
        bad_order = next(((rec[i], rec[i + 1]) for i in range(len(rec) - 1) if rec[i] >= rec[i + 1]), None)
        verdict("subscriber stream", ok,
                f"{len(rec)} received over {sub.connections} subscriptions ({sub.cutoffs} cutoffs, "
                f"{sub.starting_retries} 'starting' retries), max {max_rec}, stored max {seqs[-1] if seqs else 0}"
                + ("" if increasing else f", order broken at {bad_order}")
                + ("" if not missing_in_db else f", {len(missing_in_db)} not in DB e.g. {missing_in_db[:5]}")
                + ("" if not not_delivered else f", {len(not_delivered)} never delivered e.g. {not_delivered[:5]}")
                + (f", other errors {sub.errors[:3]}" if sub.errors else ""))

        dup_polls = q("SELECT device, code, sent_at, count(*) FROM poll_attempts "
                      "GROUP BY device, code, sent_at HAVING count(*) > 1")
        verdict("no duplicated poll records", not dup_polls,
                f"{len(dup_polls)} duplicated groups" + (f", e.g. {dup_polls[:3]}" if dup_polls else ""))

        stored = q("SELECT count(*) FROM poll_attempts WHERE http_status IS NOT NULL")[0][0]
        kills = self.faults["daemon-kill"]
        if self.final_answered is None:
            verdict("poll records vs backend", False, "pass-sim did not answer /_sim/stats at the end")
            unrecorded = None
        else:
            unrecorded = self.final_answered - stored
            ok = 0 <= unrecorded <= kills * a.devices
            verdict("poll records vs backend", ok,
                    f"answered {self.final_answered}, stored {stored}, unrecorded {unrecorded}, "
                    f"bound {kills} kills x {a.devices} devices = {kills * a.devices}"
                    + ("" if unrecorded >= 0 else " (stored > answered: duplicates)"))
            s_ans, s_sto, label = self.snapshot
            d_ans, d_sto = self.final_answered - s_ans, stored - s_sto
            verdict("no poll lost since the last SIGKILL", d_ans == d_sto,
                    f"since {label}: answered +{d_ans}, stored +{d_sto} (difference {d_ans - d_sto})")

        restarts = self.faults["sim-restart"]
        regs = q("SELECT device, count(*) FROM request_attempts WHERE stage='registration' AND outcome='ok' "
                 "GROUP BY device")
        n_regs = sum(c for _, c in regs)
        over = [(d, c) for d, c in regs if c > 1 + restarts]
        verdict("registrations per device <= 1 + sim restarts", not over,
                f"{n_regs} registrations of {len(regs)} devices, max {max((c for _, c in regs), default=0)}, "
                f"bound {1 + restarts}" + (f", over: {over[:5]}" if over else ""))
        rows = q("SELECT device, sent_at FROM request_attempts WHERE stage='registration' AND outcome='ok'")
        per_life = {}
        for dev, sent in rows:
            life = sum(1 for k in self.sim_kill_times_ms if k <= sent)
            per_life[(dev, life)] = per_life.get((dev, life), 0) + 1
        twice = [(d, l, c) for (d, l), c in per_life.items() if c > 1]
        verdict("no device registered twice within one backend life", not twice,
                f"{len(twice)} (device, life) pairs with >1" + (f", e.g. {twice[:5]}" if twice else ""))

        devices = [r[0] for r in q("SELECT name FROM devices")]
        cutoff = self.last_fault_end_ms
        logged = {r[0] for r in q(
            "SELECT DISTINCT device FROM events WHERE name='setAuthenticationStatus' "
            "AND json_extract(args,'$.status') = 1 AND time > ?", cutoff)}
        not_logged = [d for d in devices if d not in logged]
        verdict("every device logged in after the last fault", len(devices) == a.devices and not not_logged,
                f"{len(logged)}/{len(devices)} devices (configured {a.devices})"
                + (f", not: {not_logged[:10]}" if not_logged else ""))

        verdict("daemon exit code at SIGTERM", self.daemon_exit == 0, self.daemon_exit)

        logins = q("SELECT count(*) FROM events WHERE name='setAuthenticationStatus' "
                   "AND json_extract(args,'$.status') = 1")[0][0]
        con.close()

        fails = [f for f, _ in self.storage_obs]
        print()
        print("counts:")
        rows = [
            ("duration", f"{a.duration}s + settle {a.settle}s"),
            ("devices", a.devices),
            ("faults", ", ".join(f"{k} {v}" for k, v in self.faults.items())
             + ("" if self.disk_full_enabled else " (disk-full disabled)")),
            ("daemon lives", self.daemon_lives),
            ("pass-sim lives", self.sim_lives),
            ("events stored", n_events),
            ("events received by subscriber", len(rec)),
            ("polls stored (answered)", stored),
            ("answered polls (backend)", self.final_answered),
            ("unrecorded at SIGKILL", unrecorded),
            ("registrations", n_regs),
            ("re-registrations", n_regs - len(regs)),
            ("logins", logins),
            ("storage-failing observations", f"max {max(fails, default=0)}, avg "
             f"{(sum(fails) / len(fails)) if fails else 0:.1f} per storage fault; states {self.storage_states}"),
            ("daemon exit code", self.daemon_exit),
        ]
        for k, v in rows:
            print(f"  {k:32} {v}")
        print()
        print("fault log:")
        for kind, t0, t1, detail in self.fault_log:
            print(f"  +{(t0 - self.run_start_ms) / 1000:7.1f}s {kind:12} {(t1 - t0) / 1000:5.1f}s  {detail}")
        return all(results)

    def cleanup(self):
        if self.subscriber:
            self.subscriber.stop_event.set()
        self.children.kill_all()
        try:
            os.unlink(os.path.join(self.dbdir, "filler"))
        except OSError:
            pass
        if self.mounted:
            # Keep the database for inspection: copy it off the tmpfs before unmounting.
            keep = os.path.join(self.workdir, "db-copy")
            try:
                shutil.copytree(self.dbdir, keep, dirs_exist_ok=True)
            except OSError as e:
                log(f"could not copy the database off the tmpfs: {e}")
            r = subprocess.run(["umount", self.dbdir], capture_output=True, text=True)
            if r.returncode != 0:
                log(f"umount failed: {r.stderr.strip()}")
            else:
                self.mounted = False


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=1800)
    p.add_argument("--devices", type=int, default=200)
    p.add_argument("--fault-every", type=float, default=45)
    p.add_argument("--settle", type=float, default=120)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--bin", default=os.path.join(REPO_ROOT, ".build", "release"))
    p.add_argument("--workdir", default=None)
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    args.bin = os.path.abspath(args.bin)
    args.workdir = os.path.abspath(args.workdir) if args.workdir else tempfile.mkdtemp(prefix="regcoded-chaos.")
    os.makedirs(args.workdir, exist_ok=True)
    for b in ("regcoded", "pass-sim"):
        if not os.access(os.path.join(args.bin, b), os.X_OK):
            print(f"missing {b} in {args.bin}", file=sys.stderr)
            return 2
    log(f"seed {args.seed}")

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)

    soak = Soak(args)
    ok = False
    try:
        soak.run()
        ok = soak.check()
    except (SetupError, KeyboardInterrupt) as e:
        log(f"aborted: {e}")
        soak.cleanup()
        print(f"workdir (logs): {args.workdir}")
        return 2
    finally:
        soak.cleanup()
    print(f"workdir (logs, db-copy): {args.workdir}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
