"""Runs Authlib's RFC 8628 device authorization grant in a minimal Flask app on a loopback port.

    python serve_authlib.py --port 8402 [--public-base URL] [--interval 5] [--no-rotate] ...

Authlib ships the protocol (DeviceAuthorizationEndpoint, DeviceCodeGrant, RefreshTokenGrant, RevocationEndpoint,
IntrospectionEndpoint, OpenID Connect's UserInfoEndpoint) and leaves storage and pages to the application; this
file is that application: an in-memory store implementing the query methods Authlib asks for, and the pages a
person uses (a sign-in form, a user-code form, an Accept/Deny page), each form with a CSRF token.
https://docs.authlib.org/en/latest/oauth2/specs/rfc8628.html
https://docs.authlib.org/en/latest/flask/2/authorization-server.html
"""

import argparse
import hmac
import secrets
import sys
import threading
import time
from dataclasses import dataclass, field
from html import escape

from authlib.integrations.flask_oauth2 import AuthorizationServer, ResourceProtector
from authlib.oauth2.rfc6749 import ClientMixin, TokenMixin
from authlib.oauth2.rfc6749.grants import RefreshTokenGrant
from authlib.oauth2.rfc6750 import BearerTokenValidator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oauth2.rfc8628 import DEVICE_CODE_GRANT_TYPE, DeviceAuthorizationEndpoint, DeviceCodeGrant
from authlib.oauth2.rfc8628.models import DeviceCredentialDict
from authlib.oidc.core import UserInfo, UserInfoEndpoint
from flask import Flask, abort, jsonify, redirect, request, session, url_for

SCOPES = ["openid", "profile", "read"]


@dataclass
class User:
    id: int
    username: str
    password: str


@dataclass
class Client(ClientMixin):
    client_id: str
    client_secret: str | None  # None: a public client, which authenticates with its client_id alone ("none")
    client_metadata: dict = field(default_factory=dict)

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return " ".join(s for s in (scope or "").split() if s in SCOPES)

    def check_redirect_uri(self, redirect_uri):
        return False

    def check_client_secret(self, client_secret):
        return self.client_secret is not None and hmac.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method, endpoint):
        if self.client_secret is None:
            return method == "none"
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type):
        return False

    def check_grant_type(self, grant_type):
        return grant_type in (DEVICE_CODE_GRANT_TYPE, "refresh_token")


@dataclass
class Token(TokenMixin):
    """One issued token response, as Authlib's SQLAlchemy TokenMixin keeps it: access and refresh token in one row."""

    client_id: str
    user: User
    scope: str
    access_token: str
    refresh_token: str | None
    expires_in: int
    issued_at: float = field(default_factory=time.time)
    access_token_revoked: bool = False
    refresh_token_revoked: bool = False

    def check_client(self, client):
        return client.get_client_id() == self.client_id

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return self.expires_in

    def is_expired(self):
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self):
        return self.access_token_revoked

    def get_user(self):
        return self.user

    def get_client(self):
        return store.clients[self.client_id]


@dataclass
class RefreshTokenView(TokenMixin):
    """A token row seen through its refresh token, for revocation and introspection (refresh tokens do not expire)."""

    row: Token

    def check_client(self, client):
        return self.row.check_client(client)

    def get_scope(self):
        return self.row.scope

    def get_expires_in(self):
        return 0

    def is_expired(self):
        return False

    def is_revoked(self):
        return self.row.refresh_token_revoked

    def get_user(self):
        return self.row.user

    def get_client(self):
        return self.row.get_client()


class Store:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users: dict[str, User] = {}
        self.clients: dict[str, Client] = {}
        self.devices: dict[str, DeviceCredentialDict] = {}  # by device_code
        self.grants: dict[str, tuple[User, bool]] = {}  # by user_code: the person's decision
        self.tokens: list[Token] = []

    def find_token(self, token_string: str, hint: str | None):
        with self.lock:
            for row in self.tokens:
                if hint != "refresh_token" and row.access_token == token_string:
                    return row
                if hint != "access_token" and row.refresh_token == token_string:
                    return RefreshTokenView(row)
        return None

    def device_by_user_code(self, user_code: str) -> DeviceCredentialDict | None:
        wanted = normalize_user_code(user_code)
        with self.lock:
            return next((d for d in self.devices.values() if normalize_user_code(d["user_code"]) == wanted), None)


store = Store()
options = argparse.Namespace(public_base="", interval=5, rotate=True)


def normalize_user_code(text: str) -> str:
    """RFC 8628 section 6.1: case and punctuation of what a person types do not matter."""
    return "".join(c for c in text.upper() if c.isalnum())


def save_token(token: dict, request) -> None:
    row = Token(
        client_id=request.client.get_client_id(),
        user=request.user,
        scope=token.get("scope", ""),
        access_token=token["access_token"],
        refresh_token=token.get("refresh_token"),
        expires_in=token["expires_in"],
    )
    with store.lock:
        store.tokens.append(row)


class DeviceAuthorization(DeviceAuthorizationEndpoint):
    def get_verification_uri(self):
        return options.public_base + "/device"

    def save_device_credential(self, client_id, scope, data):
        credential = DeviceCredentialDict(
            client_id=client_id,
            scope=scope,
            expires_at=time.time() + data["expires_in"],
            # The polls are timed from the device authorization response: a client polls after one interval.
            last_poll=time.monotonic(),
            **data,
        )
        with store.lock:
            store.devices[data["device_code"]] = credential

    def create_endpoint_response(self, request):
        # The interval announced is the one this run was started with.
        self.INTERVAL = options.interval
        return super().create_endpoint_response(request)


class DeviceGrant(DeviceCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

    def query_device_credential(self, device_code):
        with store.lock:
            return store.devices.get(device_code)

    def query_user_grant(self, user_code):
        with store.lock:
            return store.grants.get(user_code)

    def should_slow_down(self, credential):
        """RFC 8628 section 3.5: a poll sooner than the interval gets slow_down, and the interval grows by 5 s for
        this and every later poll of that device code."""
        now = time.monotonic()
        with store.lock:
            too_early = now - credential["last_poll"] < credential["interval"]
            credential["last_poll"] = now
            if too_early:
                credential["interval"] += 5
        return too_early

    def create_token_response(self):
        response = super().create_token_response()
        # A device code gives one token response; later polls with it are refused (invalid_request, as unknown).
        credential = self.request.credential
        with store.lock:
            store.devices.pop(credential["device_code"], None)
            store.grants.pop(credential["user_code"], None)
        return response


class RefreshGrant(RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

    @property
    def INCLUDE_NEW_REFRESH_TOKEN(self):  # noqa: N802 (Authlib's name)
        return options.rotate

    def authenticate_refresh_token(self, refresh_token):
        found = store.find_token(refresh_token, "refresh_token")
        if found is not None and not found.is_revoked():
            return found.row
        return None

    def authenticate_user(self, refresh_token):
        return refresh_token.user

    def revoke_old_credential(self, refresh_token):
        # Authlib's documented example revokes the whole old row; without rotation the old refresh token stays.
        if options.rotate:
            with store.lock:
                refresh_token.access_token_revoked = True
                refresh_token.refresh_token_revoked = True


class Revocation(RevocationEndpoint):
    # RFC 7009 section 2.1: a public client revokes with its client_id alone.
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

    def query_token(self, token_string, token_type_hint):
        return store.find_token(token_string, token_type_hint)

    def revoke_token(self, token, request):
        # As Authlib's SQLAlchemy revocation endpoint: the access token always, the refresh token unless the hint
        # said access_token.
        row = token.row if isinstance(token, RefreshTokenView) else token
        with store.lock:
            row.access_token_revoked = True
            if request.form.get("token_type_hint") != "access_token":
                row.refresh_token_revoked = True


class Introspection(IntrospectionEndpoint):
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def query_token(self, token_string, token_type_hint):
        return store.find_token(token_string, token_type_hint)

    def check_permission(self, token, client, request):
        return True  # any confidential client may introspect: it plays the resource server

    def introspect_token(self, token):
        row = token.row if isinstance(token, RefreshTokenView) else token
        payload = {
            "active": True,
            "client_id": row.client_id,
            "username": row.user.username,
            "scope": row.scope,
            "sub": str(row.user.id),
            "iss": options.public_base,
            "iat": int(row.issued_at),
            "token_type": "refresh_token" if isinstance(token, RefreshTokenView) else "access_token",
        }
        if not isinstance(token, RefreshTokenView):
            payload["exp"] = int(row.issued_at + row.expires_in)
        return payload


class AccessTokenValidator(BearerTokenValidator):
    def authenticate_token(self, token_string):
        return store.find_token(token_string, "access_token")


class UserInfoView(UserInfoEndpoint):
    def get_issuer(self):
        return options.public_base

    def generate_user_info(self, user, scope):
        return UserInfo(sub=str(user.id), preferred_username=user.username).filter(scope)


app = Flask(__name__)
app.secret_key = secrets.token_bytes(32)
app.config["OAUTH2_TOKEN_EXPIRES_IN"] = {DEVICE_CODE_GRANT_TYPE: 3600, "refresh_token": 3600}
# Authlib's Flask integration issues refresh tokens only when told to.
app.config["OAUTH2_REFRESH_TOKEN_GENERATOR"] = True
server = AuthorizationServer(app, query_client=lambda client_id: store.clients.get(client_id), save_token=save_token)
server.scopes_supported = SCOPES
server.register_endpoint(DeviceAuthorization)
server.register_grant(DeviceGrant)
server.register_grant(RefreshGrant)
server.register_endpoint(Revocation)
server.register_endpoint(Introspection)
protector = ResourceProtector()
protector.register_token_validator(AccessTokenValidator())
server.register_endpoint(UserInfoView(resource_protector=protector))


@app.post("/device_authorization")
def device_authorization():
    return server.create_endpoint_response("device_authorization")


@app.post("/token")
def token():
    return server.create_token_response()


@app.post("/revoke")
def revoke():
    return server.create_endpoint_response("revocation")


@app.post("/introspect")
def introspect():
    return server.create_endpoint_response("introspection")


@app.route("/userinfo", methods=["GET", "POST"])
def userinfo():
    return server.create_endpoint_response("userinfo")


@app.get("/.well-known/oauth-authorization-server")
def metadata():
    # RFC 8414 section 3, with RFC 8628 section 4's device_authorization_endpoint.
    base = options.public_base
    return jsonify(
        issuer=base,
        device_authorization_endpoint=base + "/device_authorization",
        token_endpoint=base + "/token",
        revocation_endpoint=base + "/revoke",
        introspection_endpoint=base + "/introspect",
        userinfo_endpoint=base + "/userinfo",
        grant_types_supported=[DEVICE_CODE_GRANT_TYPE, "refresh_token"],
        response_types_supported=[],
        scopes_supported=SCOPES,
        token_endpoint_auth_methods_supported=["client_secret_basic", "client_secret_post", "none"],
        revocation_endpoint_auth_methods_supported=Revocation.CLIENT_AUTH_METHODS,
        introspection_endpoint_auth_methods_supported=Introspection.CLIENT_AUTH_METHODS,
    )


# The pages a person uses. Every form carries the session's CSRF token; a post without it is refused.


def csrf_token() -> str:
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(24)
    return session["csrf"]


def check_csrf() -> None:
    sent = request.form.get("csrf_token", "")
    if not sent or not hmac.compare_digest(sent, session.get("csrf", "")):
        abort(403)


def page(title: str, body: str, status: int = 200):
    html = f"<!DOCTYPE html><html><head><title>{escape(title)}</title></head><body><h1>{escape(title)}</h1>{body}</body></html>"
    return html, status, {"Content-Type": "text/html; charset=utf-8"}


def current_user() -> User | None:
    name = session.get("user")
    return store.users.get(name) if name else None


@app.route("/login", methods=["GET", "POST"])
def login():
    error = ""
    next_url = request.values.get("next", "/device")
    if not next_url.startswith("/"):
        next_url = "/device"
    if request.method == "POST":
        check_csrf()
        user = store.users.get(request.form.get("username", ""))
        if user and hmac.compare_digest(request.form.get("password", ""), user.password):
            session.clear()
            session["user"] = user.username
            return redirect(next_url)
        error = '<p class="error">Unknown user or wrong password.</p>'
    return page(
        "Sign in",
        f'{error}<form method="post" action="/login">'
        f'<input type="hidden" name="csrf_token" value="{csrf_token()}">'
        f'<input type="hidden" name="next" value="{escape(next_url)}">'
        '<p><label>Username <input type="text" name="username"></label></p>'
        '<p><label>Password <input type="password" name="password"></label></p>'
        '<button type="submit">Sign in</button></form>',
    )


@app.route("/device", methods=["GET", "POST"])
def device():
    if current_user() is None:
        return redirect(url_for("login", next=request.full_path.rstrip("?")))
    error = ""
    typed = request.values.get("user_code", "")
    if request.method == "POST":
        check_csrf()
        credential = store.device_by_user_code(typed)
        if credential is None:
            error = '<p class="error">Incorrect user code.</p>'
        elif credential.is_expired():
            error = '<p class="error">Expired user code.</p>'
        elif credential["user_code"] in store.grants:
            error = '<p class="error">User code has already been used.</p>'
        else:
            return redirect(url_for("confirm", user_code=credential["user_code"]))
    return page(
        "Enter the code shown on your device",
        f'{error}<form method="post" action="/device">'
        f'<input type="hidden" name="csrf_token" value="{csrf_token()}">'
        f'<p><label>Code <input type="text" name="user_code" value="{escape(typed)}"></label></p>'
        '<button type="submit">Continue</button></form>',
    )


@app.route("/device/confirm", methods=["GET", "POST"])
def confirm():
    user = current_user()
    if user is None:
        return redirect(url_for("login", next=request.full_path.rstrip("?")))
    credential = store.device_by_user_code(request.values.get("user_code", ""))
    if credential is None or credential.is_expired() or credential["user_code"] in store.grants:
        return page("No such device request", "", 404)
    if request.method == "POST":
        check_csrf()
        action = request.form.get("action")
        if action not in ("accept", "deny"):
            abort(400)
        with store.lock:
            store.grants[credential["user_code"]] = (user, action == "accept")
        return page("Device approved" if action == "accept" else "Device denied", "<p>You may close this page.</p>")
    return page(
        f"{credential['client_id']} asks for access",
        f'<p>Scope: {escape(credential.get("scope") or "")}</p>'
        f'<form method="post" action="/device/confirm">'
        f'<input type="hidden" name="csrf_token" value="{csrf_token()}">'
        f'<input type="hidden" name="user_code" value="{escape(credential["user_code"])}">'
        '<button type="submit" name="action" value="accept">Accept</button>'
        '<button type="submit" name="action" value="deny">Deny</button></form>',
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--public-base", help="the base URL clients use (default http://127.0.0.1:PORT)")
    parser.add_argument("--client-id", default="regcoded-tv")
    parser.add_argument("--confidential-client-id", default="regcoded-box")
    parser.add_argument("--client-secret", default="box-secret")
    parser.add_argument("--user", default="viewer")
    parser.add_argument("--password", default="viewer-password")
    parser.add_argument("--interval", type=int, default=5, help="the polling interval the server announces")
    parser.add_argument("--no-rotate", dest="rotate", action="store_false", help="refresh keeps the refresh token")
    args = parser.parse_args()
    options.public_base = (args.public_base or f"http://127.0.0.1:{args.port}").rstrip("/")
    options.interval = args.interval
    options.rotate = args.rotate
    store.users[args.user] = User(1, args.user, args.password)
    store.clients[args.client_id] = Client(args.client_id, None)
    store.clients[args.confidential_client_id] = Client(args.confidential_client_id, args.client_secret)

    from werkzeug.serving import make_server

    http = make_server("127.0.0.1", args.port, app, threaded=True)
    print(f"serve_authlib: listening on 127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    http.serve_forever()


if __name__ == "__main__":
    main()
