"""Runs django-oauth-toolkit's device authorization grant on a loopback port, with its own SQLite database.

    python serve_dot.py --port 8401 --workdir DIR [--public-base URL] [--client-id ID] ...

Creates (in DIR) the database, a user with a password, a public device client and a confidential one, then serves
until killed. Django's development server (threaded) is enough for a test peer on loopback.
"""

import argparse
import os
import secrets
import sys
from pathlib import Path


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workdir", required=True, help="a folder of its own: database, OIDC key")
    parser.add_argument("--public-base", help="the base URL clients use (default http://127.0.0.1:PORT)")
    parser.add_argument("--client-id", default="regcoded-tv")
    parser.add_argument("--confidential-client-id", default="regcoded-box")
    parser.add_argument("--client-secret", default="box-secret")
    parser.add_argument("--user", default="viewer")
    parser.add_argument("--password", default="viewer-password")
    parser.add_argument("--interval", type=int, default=5, help="the polling interval the server announces")
    return parser.parse_args()


def write_oidc_key(path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.write_bytes(pem)


def provision(args: argparse.Namespace) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from oauth2_provider.models import get_application_model

    call_command("migrate", verbosity=0, interactive=False, run_syncdb=True)
    user_model = get_user_model()
    if not user_model.objects.filter(username=args.user).exists():
        user_model.objects.create_user(username=args.user, password=args.password)
    application = get_application_model()
    clients = [
        (args.client_id, application.CLIENT_PUBLIC, ""),
        (args.confidential_client_id, application.CLIENT_CONFIDENTIAL, args.client_secret),
    ]
    for client_id, client_type, secret in clients:
        if application.objects.filter(client_id=client_id).exists():
            continue
        application.objects.create(
            name=client_id,
            client_id=client_id,
            client_type=client_type,
            client_secret=secret,
            authorization_grant_type=application.GRANT_DEVICE_CODE,
            algorithm=application.RS256_ALGORITHM,
            redirect_uris="",
        )


def main() -> None:
    args = parse_arguments()
    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    key = workdir / "oidc.key"
    if not key.exists():
        write_oidc_key(key)
    os.environ["DOT_WORKDIR"] = str(workdir)
    os.environ["DOT_PUBLIC_BASE"] = args.public_base or f"http://127.0.0.1:{args.port}"
    os.environ["DOT_SECRET_KEY"] = secrets.token_urlsafe(40)
    os.environ["DOT_INTERVAL"] = str(args.interval)
    os.environ["DJANGO_SETTINGS_MODULE"] = "dot_project.settings"
    sys.path.insert(0, str(Path(__file__).resolve().parent))

    import django

    django.setup()
    provision(args)

    from django.core.servers.basehttp import run
    from django.core.wsgi import get_wsgi_application

    print(f"serve_dot: listening on 127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    run("127.0.0.1", args.port, get_wsgi_application(), threading=True)


if __name__ == "__main__":
    main()
