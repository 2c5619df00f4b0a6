"""Django's login pages and django-oauth-toolkit's endpoints under /o/, with the RFC 8414 metadata also at the root."""

from django.contrib.auth import views as auth_views
from django.urls import include, path
from oauth2_provider import urls as oauth2_urls

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("o/", include(oauth2_urls)),
    # DOT's docs: a deployment under a prefix also mounts the metadata at the server root (RFC 8414 section 3).
    path("", include((oauth2_urls.metadata_urlpatterns, "oauth2_provider"), namespace="root-metadata")),
]
