"""A person's approval of a device, the way a person gives it: real HTTP, real forms, no database shortcut.

    python approve.py --base URL --user-code CODE --user U --password P [--deny] [--cacert FILE]
                      [--verification-uri URL]

Opens the verification page, signs in on the login form it is sent to (CSRF token and all hidden fields kept),
types the user code into the code form, and presses Accept (or Deny) on the confirmation page. Works with the
pages of django-oauth-toolkit (Django's login, DeviceUserCodeView, DeviceConfirmView) and of authlib_server.py.
Prints one line saying what the last page said; exits 1 with one line when a step fails.
"""

import argparse
import sys
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import requests

# Where each server puts its verification page, tried in order when --verification-uri is not given.
VERIFICATION_PATHS = ["/o/device/", "/device"]
TIMEOUT = 10  # seconds for each request
MAX_PAGES = 8  # a sign-in, a code and a confirmation take four; more means the pages go round in circles


class Form:
    def __init__(self, action: str, method: str) -> None:
        self.action = action
        self.method = method.lower() or "get"
        self.fields: list[tuple[str, str, str]] = []  # (name, type, value)
        self.buttons: list[tuple[str, str, str]] = []  # (name, value, text)

    def has(self, kind: str) -> bool:
        return any(field_type == kind for _, field_type, _ in self.fields)


class PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self.texts: dict[str, str] = {}
        self._form: Form | None = None
        self._button: list | None = None
        self._capture: str | None = None

    def handle_starttag(self, tag, attrs):
        attributes = {key: value or "" for key, value in attrs}
        if tag == "form":
            self._form = Form(attributes.get("action", ""), attributes.get("method", "get"))
            self.forms.append(self._form)
        elif tag == "input" and self._form is not None and attributes.get("name"):
            kind = attributes.get("type", "text").lower()
            if kind == "submit":
                self._form.buttons.append((attributes["name"], attributes.get("value", ""), attributes.get("value", "")))
            else:
                self._form.fields.append((attributes["name"], kind, attributes.get("value", "")))
        elif tag == "button" and self._form is not None:
            self._button = [attributes.get("name", ""), attributes.get("value", ""), ""]
        elif tag in ("title", "h1") or (tag in ("ul", "p", "div") and "error" in attributes.get("class", "")):
            self._capture = "error" if "error" in attributes.get("class", "") else tag

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "button" and self._button is not None and self._form is not None:
            self._form.buttons.append(tuple(self._button))
            self._button = None
        elif tag in ("title", "h1", "ul", "p", "div"):
            self._capture = None

    def handle_data(self, data):
        if self._button is not None:
            self._button[2] += data.strip()
        if self._capture:
            text = " ".join((self.texts.get(self._capture, "") + " " + data).split())
            self.texts[self._capture] = text


def fail(message: str) -> None:
    print(f"approve.py: {message}", file=sys.stderr)
    sys.exit(1)


def submit(session: requests.Session, page_url: str, form: Form, values: dict[str, str]) -> requests.Response:
    target = urljoin(page_url, form.action or page_url)
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(page_url))
    # What a browser sends with a form post; Django's CSRF check wants Referer (or Origin) on HTTPS.
    headers = {"Referer": page_url, "Origin": origin}
    if form.method == "post":
        return session.post(target, data=values, headers=headers, timeout=TIMEOUT)
    return session.get(target, params=values, headers=headers, timeout=TIMEOUT)


def form_values(form: Form) -> dict[str, str]:
    """The hidden and prefilled fields of a form, as a browser would send them."""
    return {name: value for name, kind, value in form.fields if kind not in ("checkbox", "radio") or value}


def find_verification_page(session: requests.Session, base: str) -> str:
    for path in VERIFICATION_PATHS:
        url = base.rstrip("/") + path
        try:
            response = session.get(url, timeout=TIMEOUT, allow_redirects=False)
        except requests.RequestException as error:
            fail(f"cannot reach {url}: {error}")
        if response.status_code != 404:
            return url
    fail(f"no verification page at {base} (tried {', '.join(VERIFICATION_PATHS)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the server's base URL")
    parser.add_argument("--user-code", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--deny", action="store_true", help="press Deny instead of Accept")
    parser.add_argument("--cacert", help="the CA file to trust for https")
    parser.add_argument("--verification-uri", help="the page the device showed (default: found under --base)")
    args = parser.parse_args()

    session = requests.Session()
    # Loopback only: no proxy from the environment, and REQUESTS_CA_BUNDLE must not replace --cacert (with
    # trust_env, requests prefers the variable over the session's verify).
    session.trust_env = False
    session.headers["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64) approve.py"
    if args.cacert:
        session.verify = args.cacert
    url = args.verification_uri or find_verification_page(session, args.base)
    try:
        response = session.get(url, timeout=TIMEOUT)
        signed_in = code_sent = decided = False
        for _ in range(MAX_PAGES):
            if response.status_code >= 400:
                fail(f"{response.request.method} {response.url} answered {response.status_code}")
            page = PageParser()
            page.feed(response.text)
            if decided:
                print(f"{'denied' if args.deny else 'approved'}: {page.texts.get('h1') or page.texts.get('title', '')}")
                return
            login = next((form for form in page.forms if form.has("password")), None)
            # The code form has a field to type the code into; a confirmation page may carry it hidden.
            code = next(
                (form for form in page.forms if any(n == "user_code" and k != "hidden" for n, k, _ in form.fields)),
                None,
            )
            confirm = next((form for form in page.forms if form.buttons and not form.has("password")), None)
            if login is not None:
                if signed_in:
                    fail(f"the sign-in of {args.user} was refused: {page.texts.get('error', 'the login form came back')}")
                values = form_values(login)
                password_field = next(name for name, kind, _ in login.fields if kind == "password")
                user_field = next(
                    (name for name, kind, _ in login.fields if kind in ("text", "email") and name != "user_code"),
                    "username",
                )
                values[user_field] = args.user
                values[password_field] = args.password
                signed_in = True
                response = submit(session, response.url, login, values)
            elif code is not None:
                if code_sent:
                    fail(f"the user code {args.user_code} was refused: {page.texts.get('error', 'the code form came back')}")
                values = form_values(code)
                values["user_code"] = args.user_code
                code_sent = True
                response = submit(session, response.url, code, values)
            elif confirm is not None:
                wanted = ("deny", "reject", "decline") if args.deny else ("accept", "approve", "allow", "authorize")
                button = next(
                    (b for b in confirm.buttons if any(w in (b[1] + " " + b[2]).lower() for w in wanted)), None
                )
                if button is None:
                    fail(f"no {'Deny' if args.deny else 'Accept'} button on {response.url}")
                values = form_values(confirm)
                if button[0]:
                    values[button[0]] = button[1]
                decided = True
                response = submit(session, response.url, confirm, values)
            else:
                fail(f"{response.url} has no form to fill: {page.texts.get('h1') or page.texts.get('title', '')}")
        fail(f"more than {MAX_PAGES} pages without a decision")
    except requests.RequestException as error:
        fail(str(error))


if __name__ == "__main__":
    main()
