"""Settings of the django-oauth-toolkit peer; everything that varies per run comes from DOT_* variables set by serve.py.

https://django-oauth-toolkit.readthedocs.io/en/stable/tutorial/tutorial_06.html (device authorization grant)
https://django-oauth-toolkit.readthedocs.io/en/stable/settings.html
"""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
WORKDIR = Path(os.environ["DOT_WORKDIR"])
PUBLIC_BASE = os.environ["DOT_PUBLIC_BASE"].rstrip("/")

SECRET_KEY = os.environ["DOT_SECRET_KEY"]
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
# Behind the nginx TLS terminator of tls_proxy.py the scheme arrives in this header (nginx sets it, clients cannot).
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = [PUBLIC_BASE]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "dot_project.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": WORKDIR / "dot.sqlite3",
        # A throwaway database: no fsync.
        "OPTIONS": {"init_command": "PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY;"},
    }
}
# Tables straight from the models (`migrate --run-syncdb`), as Django's test runner does with MIGRATE False: a
# second at start instead of ten for DOT's migrations on a loaded two-core machine.
MIGRATION_MODULES = {app.rsplit(".", 1)[-1]: None for app in INSTALLED_APPS}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/o/device/"
# The fast hasher Django's docs suggest for tests: PBKDF2 costs a second per sign-in and per hashed client secret.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

OAUTH2_PROVIDER = {
    "OAUTH_DEVICE_VERIFICATION_URI": PUBLIC_BASE + "/o/device/",
    "DEVICE_FLOW_INTERVAL": int(os.environ.get("DOT_INTERVAL", "5")),
    "SCOPES": {
        "openid": "OpenID Connect",
        "profile": "Profile",
        "read": "Read",
        "introspection": "Introspect tokens",
    },
    "DEFAULT_SCOPES": ["read"],
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": (WORKDIR / "oidc.key").read_text(),
    "OIDC_ISS_ENDPOINT": PUBLIC_BASE + "/o",
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("DOT_ACCESS_TOKEN_SECONDS", "3600")),
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {"django.server": {"handlers": ["stderr"], "level": "INFO", "propagate": False}},
}
