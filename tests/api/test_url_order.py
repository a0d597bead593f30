"""config/urls.py orders the API's routes by how hot they are, which is safe only while no
route can match another's URLs: then the order changes what each lookup costs, never which
view answers.  Every API route, given sample values, resolves to itself; the control shows a
route put in front that shadows others is caught."""

from __future__ import annotations

import re
import types

from django.urls import URLPattern, URLResolver, get_resolver, include, path
from django.urls.resolvers import RoutePattern

from config import urls

SAMPLES = {
    "int": "7",
    "str": "x",
    "slug": "x-1",
    "path": "x/y",
    "uuid": "0" * 8 + "-0000-0000-0000-" + "0" * 12,
}
_PART = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")


def _routes(patterns, prefix: str = ""):
    """(the full route, its sample URL) of every route under `patterns`."""
    for pattern in patterns:
        assert isinstance(pattern.pattern, RoutePattern), f"a regex route: {pattern.pattern}"
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        else:
            assert isinstance(pattern, URLPattern)
            yield route, _PART.sub(lambda m: SAMPLES[m["converter"] or "str"], route)


def shadowed(resolver, patterns) -> list[tuple[str, str]]:
    """The API routes whose sample URL another route answers: (the route, the one answering)."""
    wrong = []
    for route, url in _routes(patterns, "api/"):
        found = resolver.resolve("/" + url).route
        if found != route:
            wrong.append((route, found))
    return wrong


def test_every_api_route_answers_its_own_urls():
    routes = list(_routes(urls.api_patterns))
    assert len(routes) > 40
    assert shadowed(get_resolver(), urls.api_patterns) == []


def test_control_a_route_in_front_that_matches_others_is_caught():
    catch_all = path("bookings/<int:booking_id>/<str:anything>", lambda request: None)
    patched = [catch_all, *urls.api_patterns]
    urlconf = types.ModuleType("shadowing_urls")  # a module: hashable, as a urlconf is
    urlconf.urlpatterns = [path("api/", include(patched))]
    resolver = URLResolver(RoutePattern("/"), urlconf)
    found = dict(shadowed(resolver, patched))
    caught = "api/bookings/<int:booking_id>/<str:anything>"
    assert found["api/bookings/<int:booking_id>/payments"] == caught
    assert found["api/bookings/<int:booking_id>/passengers"] == caught
