"""nginx as a TLS terminator on loopback, in front of one of the OAuth test servers, with a CA made by openssl.

    python tls_proxy.py --upstream-port 8401 --port 8443 --dir DIR

Makes DIR/ca.pem (a throwaway CA, valid two days) and a certificate for 127.0.0.1 and localhost signed by it, writes
an nginx configuration of its own in DIR (pid, logs and temp files there too, nothing from /etc/nginx), and runs
nginx in the foreground (`daemon off`) until SIGTERM. A client reaches https://127.0.0.1:PORT trusting DIR/ca.pem
(curl --cacert DIR/ca.pem). Run as root, nginx is started as nobody: it needs no privilege for a port above 1024.
Used by launch.py --tls; Debian packages nginx and openssl.
"""

import argparse
import ctypes
import grp
import os
import pwd
import shutil
import signal
import subprocess
import sys
from pathlib import Path

NGINX_CONF = """\
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
daemon off;
events {{ worker_connections 128; }}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/temp/body;
    proxy_temp_path {dir}/temp/proxy;
    fastcgi_temp_path {dir}/temp/fastcgi;
    uwsgi_temp_path {dir}/temp/uwsgi;
    scgi_temp_path {dir}/temp/scgi;
    server {{
        listen 127.0.0.1:{port} ssl http2;
        ssl_certificate {dir}/server.pem;
        ssl_certificate_key {dir}/server.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / {{
            proxy_pass http://127.0.0.1:{upstream};
            # The servers build their URLs and check CSRF origins from these: the Host with the TLS port, https.
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-Proto https;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_read_timeout 30s;
        }}
    }}
}}
"""

SERVER_EXTENSIONS = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
"""


def die_with_parent() -> None:
    """For a child's preexec_fn: SIGTERM when the process that started it dies, however it dies (Linux prctl
    PR_SET_PDEATHSIG), so that no server outlives a launcher that was killed. subprocess calls it after dropping
    privileges, which would otherwise clear the setting."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)


def openssl(*args: str, cwd: Path) -> None:
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {result.stderr.strip().splitlines()[-1:]}")


def make_certificates(directory: Path) -> Path:
    """A CA and a server certificate for 127.0.0.1 signed by it; returns the CA file."""
    directory.mkdir(parents=True, exist_ok=True)
    openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=regcoded OAuth test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=directory,
    )  # fmt: skip
    openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=127.0.0.1",
        cwd=directory,
    )  # fmt: skip
    (directory / "server.ext").write_text(SERVER_EXTENSIONS)
    openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-out", "server.pem", "-extfile", "server.ext",
        cwd=directory,
    )  # fmt: skip
    return directory / "ca.pem"


def start_nginx(directory: Path, port: int, upstream_port: int, log=None) -> subprocess.Popen:
    """Starts nginx in the foreground with its configuration in directory; the caller stops it with SIGTERM."""
    nginx = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
    if nginx is None:
        raise RuntimeError("nginx is not installed (Debian: apt-get install nginx)")
    for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (directory / "temp" / name).mkdir(parents=True, exist_ok=True)
    conf = directory / "nginx.conf"
    conf.write_text(NGINX_CONF.format(dir=directory, port=port, upstream=upstream_port))
    drop = {}
    if os.geteuid() == 0:
        # Nothing here needs root: the whole prefix goes to nobody, and nginx starts as nobody.
        uid = pwd.getpwnam("nobody").pw_uid
        gid = grp.getgrnam("nogroup").gr_gid
        for parent in directory.parents:
            if not os.stat(parent).st_mode & 0o001:
                raise RuntimeError(f"nginx runs as nobody, which cannot reach {directory} ({parent} is closed to others)")
        for path in [directory, *directory.rglob("*")]:
            os.chown(path, uid, gid)
        drop = {"user": uid, "group": gid, "extra_groups": []}
    return subprocess.Popen(
        # -e: the error log from the first moment, before the configuration (which says the same) is read.
        [nginx, "-p", str(directory), "-c", str(conf), "-e", str(directory / "error.log")],
        stdin=subprocess.DEVNULL,
        stdout=log or sys.stderr,
        stderr=log or sys.stderr,
        preexec_fn=die_with_parent,
        **drop,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream-port", type=int, required=True)
    parser.add_argument("--port", type=int, required=True, help="the https port on 127.0.0.1")
    parser.add_argument("--dir", required=True, help="a folder of its own for keys, configuration, pid and logs")
    args = parser.parse_args()
    directory = Path(args.dir).resolve()
    ca = make_certificates(directory)
    process = start_nginx(directory, args.port, args.upstream_port)
    signal.signal(signal.SIGTERM, lambda *_: process.terminate())
    print(f"https://127.0.0.1:{args.port} -> http://127.0.0.1:{args.upstream_port}; trust {ca}", flush=True)
    try:
        sys.exit(process.wait())
    except KeyboardInterrupt:
        process.terminate()
        sys.exit(process.wait(timeout=10))


if __name__ == "__main__":
    main()
