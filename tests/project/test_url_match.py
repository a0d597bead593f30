"""The served handler's remembered URL match (config/url_match.py, config/served.py): the same
match as Django's resolver for every route of the URL conf, a 404 still Django's own, a
per-request `urlconf` honoured, a changed ROOT_URLCONF or `clear_url_caches()` obeyed, and
misses never remembered; each with a control that shows the check can fail."""

from __future__ import annotations

import functools
import re
import sys
import types

import pytest
from django.conf.urls.i18n import i18n_patterns
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpResponse
from django.test import RequestFactory, override_settings
from django.urls import (
    URLPattern,
    URLResolver,
    clear_url_caches,
    get_resolver,
    path,
)
from django.urls.exceptions import Resolver404
from django.utils import translation

from config import served, url_match

FIELDS = (
    "func",
    "args",
    "kwargs",
    "route",
    "url_name",
    "app_names",
    "namespaces",
    "view_name",
    "captured_kwargs",
    "extra_kwargs",
)
SAMPLES = {
    "int": "7",
    "str": "abc",
    "slug": "a-b",
    "path": "a/b",
    "uuid": "0" * 8 + "-0000" * 3 + "-" + "0" * 12,
}


MEMO = url_match._resolve_for  # as imported: a control may replace it for one test


@pytest.fixture(autouse=True)
def fresh_memo():
    """Each test starts with nothing remembered (a control may leave a changed match)."""
    MEMO.cache_clear()
    yield
    MEMO.cache_clear()


def real_paths(patterns=None, prefix="/") -> list[str]:
    """A path for every route of the URL conf (`path()` routes; a converter's sample value),
    a second id for each route with ids, so two paths of one route are told apart."""
    found = []
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        route = getattr(pattern.pattern, "_route", None)
        if route is None:  # a regex route (the admin's app index): one of its own below
            continue
        for sample in ("7", "42"):
            here = prefix + re.sub(
                r"<(?:(\w+):)?\w+>",
                lambda m, s=sample: s if (m[1] or "str") == "int" else SAMPLES[m[1] or "str"],
                str(route),
            )
            if isinstance(pattern, URLResolver):
                found += real_paths(pattern.url_patterns, here)
            elif isinstance(pattern, URLPattern):
                found.append(here)
    return sorted(set(found)) + (["/admin/bookings/"] if patterns is None else [])


def fields(match) -> tuple:
    return tuple(getattr(match, name) for name in FIELDS)


def served_match(path_info: str, **attributes):
    request = RequestFactory().get(path_info)
    vars(request).update(attributes)
    handler = served.ServedHandler.__new__(served.ServedHandler)  # no middleware needed
    match = handler.resolve_request(request)
    assert request.resolver_match is match
    return match


def djangos_match(path_info: str, **attributes):
    request = RequestFactory().get(path_info)
    vars(request).update(attributes)
    return WSGIHandler().resolve_request(request)


def wrong_paths(paths) -> list[str]:
    """The paths whose served match (asked twice: the second time remembered) is not
    Django's, field by field."""
    wrong = []
    for path_info in paths:
        for _ in range(2):
            if outcome(served_match, path_info) != outcome(djangos_match, path_info):
                wrong.append(path_info)
    return wrong


def outcome(resolve, path_info: str) -> tuple:
    try:
        return fields(resolve(path_info))
    except Resolver404 as missed:
        return ("404", missed.args)


def test_the_remembered_match_is_djangos_for_every_route():
    paths = real_paths()
    assert len(paths) > 100
    assert {"/api/bookings", "/api/flights/7/seats", "/admin/", "/healthz"} <= set(paths)
    assert wrong_paths(paths) == []
    # Remembered: the second time is the same object, with no resolving.
    assert served_match("/api/bookings") is served_match("/api/bookings")


def test_control_a_memo_keyed_by_the_routes_shape_is_caught(monkeypatch):
    """Control: a memo that mixed up two paths of one route (ids dropped from the key) is
    caught by the comparison above."""
    clear_url_caches()

    def by_shape(resolver):
        remembered = functools.lru_cache(maxsize=None)(resolver.resolve)
        return lambda p: remembered(re.sub(r"\d+", "7", p))

    monkeypatch.setattr(url_match, "_resolve_for", by_shape)
    assert "/api/flights/42/seats" in wrong_paths(real_paths())


def urlconf_module(name: str, view) -> str:
    module = types.ModuleType(name)
    module.urlpatterns = [path("api/bookings", view, name="other")]
    sys.modules[name] = module
    return name


def other_view(request):
    return HttpResponse("other")


@pytest.fixture
def other_urlconf():
    name = urlconf_module("tests_project_url_match_other", other_view)
    yield name
    del sys.modules[name]


def test_a_per_request_urlconf_is_honoured(other_urlconf):
    served_match("/api/bookings")  # the root's match remembered first
    assert served_match("/api/bookings", urlconf=other_urlconf).func is other_view
    assert served_match("/api/bookings").func is not other_view


def test_control_a_memo_keyed_without_the_urlconf_is_caught(other_urlconf, monkeypatch):
    """Control: a memo keyed by the path alone answers the root's view for a request with
    its own URL conf."""
    by_path = functools.lru_cache(maxsize=None)(lambda p: get_resolver().resolve(p))

    def memo_only(handler, request):  # the request's urlconf not looked at
        request.resolver_match = by_path(request.path_info)
        return request.resolver_match

    monkeypatch.setattr(served.ServedHandler, "resolve_request", memo_only)
    served_match("/api/bookings")
    assert served_match("/api/bookings", urlconf=other_urlconf).func is not other_view


def test_a_changed_root_urlconf_or_cleared_url_caches_are_obeyed(other_urlconf):
    root = served_match("/api/bookings")
    with override_settings(ROOT_URLCONF=other_urlconf):
        assert served_match("/api/bookings").func is other_view
        # Routes changed in place, then Django's caches cleared, as a test would.
        sys.modules[other_urlconf].urlpatterns = [path("api/bookings", HttpResponse)]
        assert served_match("/api/bookings").func is other_view  # not cleared: remembered
        clear_url_caches()
        assert served_match("/api/bookings").func is HttpResponse
    assert served_match("/api/bookings").func is root.func


def test_control_a_memo_keyed_by_the_urlconfs_name_misses_a_cleared_cache(
    other_urlconf, monkeypatch
):
    """Control: keyed by the URL conf's name (not Django's resolver), `clear_url_caches()`
    would not be obeyed."""
    by_name = functools.lru_cache(maxsize=None)(lambda u, p: get_resolver(u).resolve(p))
    monkeypatch.setattr(served, "remembered_match", by_name)
    with override_settings(ROOT_URLCONF=other_urlconf):
        assert served_match("/api/bookings").func is other_view
        sys.modules[other_urlconf].urlpatterns = [path("api/bookings", HttpResponse)]
        clear_url_caches()
        assert served_match("/api/bookings").func is other_view  # stale


def test_a_miss_is_djangos_resolver404_and_is_not_remembered():
    resolver = get_resolver()
    before = url_match._resolve_for(resolver).cache_info().currsize
    for number in range(50):
        with pytest.raises(Resolver404) as ours:
            served_match(f"/nowhere/{number}")
        with pytest.raises(Resolver404) as djangos:
            djangos_match(f"/nowhere/{number}")
        assert ours.value.args == djangos.value.args  # the path and every route tried
    assert url_match._resolve_for(resolver).cache_info().currsize == before


def test_control_a_memo_of_misses_would_fill_up():
    """Control: a memo that kept misses (as the cached reads' did, None) grows with every
    path a client makes up, which the check above would see."""
    kept = functools.lru_cache(maxsize=None)(lambda p: url_match.match_or_none(None, p))
    for number in range(50):
        kept(f"/nowhere/{number}")
    assert kept.cache_info().currsize == 50


def answer(handler, path_info: str) -> tuple:
    """Status and bytes as a WSGI server gets them (the per-request ids masked)."""
    statuses = []
    body = handler(
        RequestFactory().get(path_info).environ,
        lambda status, headers, exc_info=None, seen=statuses: seen.append(status),
    )
    content = b"".join(body)
    getattr(body, "close", lambda: None)()
    # The request id and the CSRF token are made per request.
    return statuses[0], re.sub(rb"[0-9A-Za-z]{32,}", b"<made>", content)


@pytest.mark.django_db
@pytest.mark.parametrize("path_info", ["/api/nowhere", "/nowhere/at-all", "/admin/x/y/z/"])
@pytest.mark.parametrize("debug", [False, True])
def test_a_404_is_djangos_own_answer(settings, path_info, debug):
    settings.DEBUG = debug
    ours = answer(served.ServedHandler(), path_info)
    assert ours[0].startswith("404") or path_info.startswith("/admin/")
    assert ours == answer(WSGIHandler(), path_info)


@pytest.mark.django_db
def test_control_a_404_of_our_own_making_is_caught(settings):
    """Control: a miss answered without Django's resolver (no routes tried) shows in the
    debug 404 page, so the comparison above can fail."""
    settings.DEBUG = True

    class OwnMiss(served.ServedHandler):
        def resolve_request(self, request):
            raise Resolver404({"path": request.path_info[1:], "tried": []})

    assert answer(OwnMiss(), "/nowhere/at-all") != answer(WSGIHandler(), "/nowhere/at-all")


class MutatingMiddleware:
    """A `process_view` that changes the view's kwargs in place: what nothing may do."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view, args, kwargs):
        kwargs["changed"] = True


def changed_matches(paths) -> list[str]:
    """The paths whose remembered match differs from Django's after full requests through
    the served handler (the whole chain, the views, DRF, the metric and the log line)."""
    handler = served.ServedHandler()
    for path_info in paths:
        answer(handler, path_info)
    return [p for p in paths if fields(served_match(p)) != fields(djangos_match(p))]


SERVED_PATHS = ["/api/flights/7", "/api/bookings", "/api/flights/7/seats", "/bookings/7/", "/"]


@pytest.mark.django_db
def test_full_requests_leave_the_shared_match_as_it_was():
    assert changed_matches(SERVED_PATHS) == []


@pytest.mark.django_db
def test_control_a_middleware_changing_the_kwargs_is_caught(settings):
    """Control: a `process_view` changing the kwargs in place would change the next
    request's match, and the check above sees it."""
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, f"{__name__}.MutatingMiddleware"]
    assert "/bookings/7/" in changed_matches(SERVED_PATHS)


@pytest.fixture
def translated_urlconf(settings):
    module = types.ModuleType("tests_project_url_match_i18n")
    module.urlpatterns = i18n_patterns(path("flights", other_view), prefix_default_language=False)
    sys.modules[module.__name__] = module
    settings.ROOT_URLCONF = module.__name__
    yield module.__name__
    del sys.modules[module.__name__]


def test_a_language_dependent_urlconf_is_resolved_every_time(translated_urlconf):
    with translation.override("en"):
        assert served_match("/flights").func is other_view
    with translation.override("de"), pytest.raises(Resolver404):
        served_match("/flights")  # under German the route is /de/flights
    assert url_match._resolve_for(get_resolver()) == get_resolver().resolve


def test_control_remembered_under_one_language_it_would_answer_another(translated_urlconf):
    """Control: remembered regardless of the language, /flights would match under German."""
    remembered = functools.lru_cache(maxsize=None)(get_resolver().resolve)
    with translation.override("en"):
        remembered("/flights")
    with translation.override("de"):
        assert remembered("/flights").func is other_view
