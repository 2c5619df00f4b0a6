"""Starts one OAuth device-flow test server (optionally behind nginx TLS), prints one JSON line, runs until killed.

    sh Tests/oauth-servers/launch.sh --server dot|authlib [--tls] [--port N] [--tls-port N] [--interval S]
                                     [--no-rotate] [--ready-timeout S] [--log FILE]

Run through launch.sh, which makes the private test venv (Tests/test-venv.sh); this installs the packages of
requirements.txt into it when they are missing or out of range. Once the server answers its RFC 8414 metadata,
one line goes to stdout:

    {"server": "dot", "base": "http://127.0.0.1:8401", "issuer": ..., "device_authorization_endpoint": ...,
     "token_endpoint": ..., "revocation_endpoint": ..., "introspection_endpoint": ..., "userinfo_endpoint": ...,
     "verification_uri": ..., "client_id": ..., "confidential_client_id": ..., "client_secret": ..., "user": ...,
     "password": ..., "interval": 5, "ca_file": null, "pid": 1234}

Everything else goes to stderr (the servers' request logs to --log FILE when given). SIGTERM or SIGINT stops everything it started (the server, nginx) and removes its
temporary folder; so does the death of any of them, with exit status 1. Every wait is bounded.
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
INSTALL_TIMEOUT = 600  # seconds for pip
STOP_TIMEOUT = 10  # seconds a child gets to stop after SIGTERM before SIGKILL

# Each server's endpoints relative to its base URL: DOT's metadata names no device authorization endpoint and no
# userinfo (that is in its OpenID configuration), so the launcher says where they are.
# https://django-oauth-toolkit.readthedocs.io/en/stable/tutorial/tutorial_06.html
ENDPOINTS = {
    "dot": {
        "device_authorization_endpoint": "/o/device-authorization/",
        "token_endpoint": "/o/token/",
        "revocation_endpoint": "/o/revoke_token/",
        "introspection_endpoint": "/o/introspect/",
        "userinfo_endpoint": "/o/userinfo/",
        "verification_uri": "/o/device/",
    },
    "authlib": {
        "device_authorization_endpoint": "/device_authorization",
        "token_endpoint": "/token",
        "revocation_endpoint": "/revoke",
        "introspection_endpoint": "/introspect",
        "userinfo_endpoint": "/userinfo",
        "verification_uri": "/device",
    },
}
CREDENTIALS = {
    "client_id": "regcoded-tv",
    "confidential_client_id": "regcoded-box",
    "client_secret": "box-secret",
    "user": "viewer",
    "password": "viewer-password",
}


def fail(message: str) -> None:
    print(f"launch: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("+")[0])[:3])


def unmet_requirements() -> list[str]:
    """The lines of requirements.txt not met in this environment (only >= and < bounds are used there)."""
    unmet = []
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name = re.match(r"[A-Za-z0-9_.-]+", line).group(0)
        try:
            installed = version_tuple(metadata.version(name))
        except metadata.PackageNotFoundError:
            unmet.append(line)
            continue
        for operator, bound in re.findall(r"(>=|<)\s*([0-9.]+)", line):
            if (operator == ">=" and installed < version_tuple(bound)) or (
                operator == "<" and installed >= version_tuple(bound)
            ):
                unmet.append(line)
                break
    return unmet


def ensure_packages() -> None:
    if not unmet_requirements():
        return
    # Several launchers may start at once; one installs, the others wait for it and find it done.
    with open(Path(sys.prefix) / ".oauth-servers-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        unmet = unmet_requirements()
        if not unmet:
            return
        print(f"launch: installing into {sys.prefix}: {', '.join(unmet)}", file=sys.stderr, flush=True)
        try:
            result = subprocess.run(
                [sys.executable, "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            fail(f"pip did not install {REQUIREMENTS.name} into {sys.prefix} within {INSTALL_TIMEOUT} s")
        if result.returncode != 0 or unmet_requirements():
            said = (result.stderr.strip().splitlines() or ["no message"])[-1]
            fail(f"cannot install {REQUIREMENTS.name} into {sys.prefix} (pip: {said})")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch_json(url: str, ca_file: str | None) -> dict | None:
    context = ssl.create_default_context(cafile=ca_file) if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as response:
            return json.load(response)
    except (urllib.error.URLError, OSError, ValueError):
        return None


def label(child: subprocess.Popen) -> str:
    """serve_dot.py, serve_authlib.py or nginx."""
    return Path(child.args[1] if child.args[0] == sys.executable else child.args[0]).name


def stop(children: list[subprocess.Popen]) -> None:
    for child in reversed(children):  # the proxy first, then the server behind it
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=STOP_TIMEOUT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=sorted(ENDPOINTS), required=True)
    parser.add_argument("--tls", action="store_true", help="put nginx in front, serving https with a CA of its own")
    parser.add_argument("--port", type=int, default=0, help="the server's http port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--tls-port", type=int, default=0, help="nginx's https port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--interval", type=int, default=5, help="the polling interval the server announces")
    parser.add_argument("--no-rotate", action="store_true", help="authlib only: a refresh keeps the refresh token")
    parser.add_argument("--ready-timeout", type=float, default=180, help="seconds to wait for the server to answer")
    parser.add_argument("--log", help="append the server's and nginx's output to this file instead of stderr")
    args = parser.parse_args()
    if args.no_rotate and args.server != "authlib":
        fail("--no-rotate is for --server authlib (django-oauth-toolkit always rotates)")
    if args.tls:
        for tool, package in (("nginx", "nginx"), ("openssl", "openssl")):
            if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
                fail(f"--tls needs {tool} (Debian: apt-get install {package})")

    ensure_packages()
    sys.path.insert(0, str(HERE))
    import tls_proxy  # after ensure_packages: nothing in it needs the venv, but keep one order

    port = args.port or free_port()
    tls_port = (args.tls_port or free_port()) if args.tls else None
    base = f"https://127.0.0.1:{tls_port}" if args.tls else f"http://127.0.0.1:{port}"
    workdir = Path(tempfile.mkdtemp(prefix=f"oauth-{args.server}-"))
    # nginx runs as nobody when this runs as root: it must pass through (not list) this folder to its own.
    workdir.chmod(0o711)
    children: list[subprocess.Popen] = []
    stopping = False

    def on_signal(number, _frame):
        nonlocal stopping
        stopping = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    status = 0
    # A caller that reads only the JSON line need not drain a pipe of request logs.
    log = open(args.log, "a") if args.log else sys.stderr
    try:
        ca_file = None
        if args.tls:
            try:
                ca_file = str(tls_proxy.make_certificates(workdir / "nginx"))
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
                fail(str(error))
        command = [
            sys.executable,
            str(HERE / f"serve_{args.server}.py"),
            "--port", str(port),
            "--public-base", base,
            "--interval", str(args.interval),
            "--client-id", CREDENTIALS["client_id"],
            "--confidential-client-id", CREDENTIALS["confidential_client_id"],
            "--client-secret", CREDENTIALS["client_secret"],
            "--user", CREDENTIALS["user"],
            "--password", CREDENTIALS["password"],
        ]  # fmt: skip
        if args.server == "dot":
            command += ["--workdir", str(workdir / "dot")]
        if args.no_rotate:
            command.append("--no-rotate")
        children.append(
            subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=tls_proxy.die_with_parent
            )
        )
        if args.tls:
            try:
                children.append(tls_proxy.start_nginx(workdir / "nginx", tls_port, port, log))
            except (RuntimeError, OSError) as error:
                fail(str(error))

        deadline = time.monotonic() + args.ready_timeout
        document = None
        while document is None:
            for child in children:
                if child.poll() is not None:
                    fail(f"{label(child)} exited with {child.returncode} while starting (its log is above)")
            if time.monotonic() > deadline:
                fail(f"{base} did not answer within {args.ready_timeout:.0f} s")
            document = fetch_json(base + "/.well-known/oauth-authorization-server", ca_file)
            if document is None:
                time.sleep(0.25)

        line = {"server": args.server, "base": base, "issuer": document.get("issuer")}
        line.update({name: base + path for name, path in ENDPOINTS[args.server].items()})
        line.update(CREDENTIALS)
        line.update(interval=args.interval, ca_file=ca_file, pid=os.getpid())
        print(json.dumps(line), flush=True)

        while True:
            for child in children:
                if child.poll() is not None:
                    print(f"launch: {label(child)} exited with {child.returncode}", file=sys.stderr, flush=True)
                    status = 1
                    raise KeyboardInterrupt
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop(children)
        shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(status if not stopping else 0)


if __name__ == "__main__":
    main()
