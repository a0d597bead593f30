"""kernel.web.id_urls: a URL of one id from a template is Django's `reverse`, under any script
prefix, URL conf and language (i18n_patterns, translated routes); each key of the template
has a control showing the wrong URL without it."""

from __future__ import annotations

import sys
import types

import pytest
from django.conf.urls.i18n import i18n_patterns
from django.http import HttpResponse
from django.urls import NoReverseMatch, path, reverse, set_script_prefix, set_urlconf
from django.urls.base import get_script_prefix
from django.utils.translation import gettext_lazy, override

from kernel.web import id_urls

IDS = (1, 7, 2_000_000_011, 2**62)


@pytest.fixture
def script_prefix():
    before = get_script_prefix()
    yield set_script_prefix
    set_script_prefix(before)


@pytest.mark.parametrize(
    "name", ["bookings_api:detail", "bookings_api:passengers", "bookings:detail"]
)
@pytest.mark.parametrize("prefix", ["/", "/shop/", "/b%C3%BCro/"])
def test_an_id_url_is_djangos_reverse_under_any_script_prefix(script_prefix, name, prefix):
    script_prefix(prefix)
    for object_id in IDS:
        assert id_urls.id_url(name, object_id) == reverse(name, args=[object_id])


def test_control_a_template_not_keyed_by_the_prefix_would_answer_the_old_one(
    script_prefix, monkeypatch
):
    unkeyed = id_urls._url_template
    monkeypatch.setattr(
        id_urls, "_url_template", lambda name, prefix, *rest: unkeyed(name, "/", *rest)
    )
    script_prefix("/")
    assert id_urls.id_url("bookings_api:detail", 5) == reverse("bookings_api:detail", args=[5])
    script_prefix("/shop/")
    assert id_urls.id_url("bookings_api:detail", 5) != reverse("bookings_api:detail", args=[5])


def test_a_route_without_an_id_is_djangos_no_reverse_match():
    with pytest.raises(NoReverseMatch):
        id_urls.id_url("api-me", 5)


@pytest.fixture
def language_urlconf():
    """A URL conf whose routes depend on the language: i18n_patterns, a translated route."""
    module = types.ModuleType("tests_kernel_id_urls_i18n")
    module.urlpatterns = [
        *i18n_patterns(path("orders/<int:pk>", HttpResponse, name="order")),
        path(gettext_lazy("bookings") + "/<int:pk>", HttpResponse, name="translated"),
    ]
    sys.modules[module.__name__] = module
    set_urlconf(module.__name__)
    yield module.__name__
    set_urlconf(None)
    del sys.modules[module.__name__]


@pytest.mark.parametrize("language", ["en", "de", "ru"])
@pytest.mark.parametrize("name", ["order", "translated"])
def test_under_language_dependent_routes_it_is_djangos_reverse(language_urlconf, name, language):
    assert id_urls._language_dependent(language_urlconf)
    with override(language):
        for object_id in IDS:
            assert id_urls.id_url(name, object_id) == reverse(name, args=[object_id])


def test_control_a_template_not_keyed_by_the_language_would_answer_the_first_one(
    language_urlconf, monkeypatch
):
    monkeypatch.setattr(id_urls, "_language_dependent", lambda urlconf: False)
    with override("en"):
        assert id_urls.id_url("order", 5) == "/en/orders/5"
    with override("de"):
        assert reverse("order", args=[5]) == "/de/orders/5"
        assert id_urls.id_url("order", 5) == "/en/orders/5"  # wrong: the cached English one


def test_the_projects_urls_do_not_depend_on_the_language():
    from django.conf import settings

    assert not id_urls._language_dependent(settings.ROOT_URLCONF)
