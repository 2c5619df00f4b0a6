"""A minimal Django project around django-oauth-toolkit's device authorization grant (RFC 8628)."""
