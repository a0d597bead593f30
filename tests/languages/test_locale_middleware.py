"""Our LocaleMiddleware answers as Django's does (issue 26 only removed work that changes
nothing without language-prefixed URLs), and a URLconf with such URLs still gets Django's."""

from __future__ import annotations

import sys
import types

import pytest
from django.conf.urls.i18n import i18n_patterns
from django.http import HttpResponse
from django.middleware.locale import LocaleMiddleware as DjangosLocaleMiddleware
from django.test import RequestFactory
from django.urls import path
from django.utils import translation

from languages.middleware import LocaleMiddleware

REQUESTS = [
    {},
    {"HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9,en;q=0.5"},
    {"HTTP_ACCEPT_LANGUAGE": "ru"},
    {"HTTP_ACCEPT_LANGUAGE": "fr-FR"},
    {"HTTP_ACCEPT_LANGUAGE": "de", "HTTP_COOKIE": "django_language=ru"},
    {"HTTP_COOKIE": "django_language=xx"},
]


def answer(middleware_class, url: str, headers: dict, status: int = 200):
    def view(request):
        response = HttpResponse(status=status)
        response.headers["X-Language"] = translation.get_language()
        response.headers["X-Request-Language"] = request.LANGUAGE_CODE
        return response

    try:
        response = middleware_class(view)(RequestFactory().get(url, **headers))
        return (
            response.status_code,
            response.headers.get("Location"),
            response.headers.get("Vary"),
            response.headers.get("Content-Language"),
            response.headers.get("X-Language"),
            response.headers.get("X-Request-Language"),
        )
    finally:
        translation.deactivate()


@pytest.mark.parametrize("headers", REQUESTS)
@pytest.mark.parametrize("url", ["/api/bookings", "/de/flights", "/"])
@pytest.mark.parametrize("status", [200, 404])
def test_it_answers_as_djangos_does(url, headers, status):
    assert answer(LocaleMiddleware, url, headers, status) == answer(
        DjangosLocaleMiddleware, url, headers, status
    )


@pytest.fixture
def prefixed_urlconf(settings):
    """A URLconf with i18n_patterns (prefix_default_language on: a 404 without prefix
    redirects)."""
    module = types.ModuleType("tests_languages_prefixed_urls")
    module.urlpatterns = i18n_patterns(path("flights", lambda request: HttpResponse()))
    sys.modules[module.__name__] = module
    settings.ROOT_URLCONF = module.__name__
    yield module.__name__
    del sys.modules[module.__name__]


@pytest.mark.parametrize("headers", REQUESTS)
@pytest.mark.parametrize("url", ["/flights", "/de/flights", "/ru/nowhere"])
def test_with_language_prefixed_urls_it_is_djangos(prefixed_urlconf, url, headers):
    ours = answer(LocaleMiddleware, url, headers, 404)
    assert ours == answer(DjangosLocaleMiddleware, url, headers, 404)
    if url == "/de/flights":
        assert ours[4] == "de"  # the path's language, which only Django's branch reads


def test_control_the_short_path_would_miss_a_prefixed_urls_language(prefixed_urlconf):
    """Control: were the short path taken with i18n_patterns, the path's language would be
    lost (so the delegation test above can fail)."""

    class AlwaysShort(LocaleMiddleware):
        @staticmethod
        def _prefixed_urls(request) -> bool:
            return False

    headers = {"HTTP_ACCEPT_LANGUAGE": "ru"}
    assert answer(AlwaysShort, "/de/flights", headers, 404) != answer(
        DjangosLocaleMiddleware, "/de/flights", headers, 404
    )
