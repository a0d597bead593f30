from django.contrib import admin
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.api.auth import ObtainTokenApi
from config.health import healthz, readyz
from config.metrics import metrics_view
from storefront import account_api


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Browsers (and the admin's pages, which link no icon) ask for /favicon.ico."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


# Django tries patterns in order and all of these are disjoint (tests/api/test_url_order.py),
# so the order changes only the cost: the hot endpoints (seat map, search, holds, then the pay
# and its webhook) are found first (issue 26).
api_patterns = [
    path("", include("flights.api_urls")),
    path("", include("storefront.api_urls")),
    path("", include("payments.api_urls")),
    path("", include("events.api_urls")),
    path("auth/token", ObtainTokenApi.as_view(), name="api-token"),
    path("accounts", account_api.SignUpApi.as_view(), name="api-accounts"),
    path("me", account_api.MeApi.as_view(), name="api-me"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("storefront.waitlist_api_urls")),
    path("", include("waitroom.api_urls")),
    path("", include("partners.api_urls")),
]

urlpatterns = [
    path("api/", include(api_patterns)),  # first: most requests are the API's
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("favicon.ico", favicon, name="favicon"),
    path("admin/", admin.site.urls),
    # Sign-up, e-mail verification and our password-reset view, then Django's login, logout
    # and the rest of the password reset.
    path("accounts/", include("accounts.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("languages.urls")),
    path("", include("flights.urls")),
    path("", include("events.urls")),
    path("", include("storefront.urls")),
    path("", include("storefront.waitlist_urls")),
    path("", include("payments.urls")),
    path("", include("waitroom.urls")),
]

# Under /api/ even "no such URL" and crashes answer in problem+json; pages keep Django's.
handler404 = "config.api.exceptions.not_found"
handler500 = "config.api.exceptions.server_error"
