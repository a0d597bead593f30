"""config/urls.py lists the hot API endpoints first (issue 26): only safe while no two URL
patterns can match the same path, so that the order changes the cost and never the view."""

from __future__ import annotations

import re

from django.urls import URLPattern, URLResolver, get_resolver, resolve

PARAMETER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
SAMPLES = {"int": "7", "str": "x", "slug": "x", "path": "x/y", "uuid": "0" * 32}


def leaves(patterns, prefix: str = "", regex: str = ""):
    """Every view's route (for samples) and full regex (for matching), with its prefixes."""
    for pattern in patterns:
        part = pattern.pattern.regex.pattern.removeprefix("^")
        if isinstance(pattern, URLResolver):
            part = part.removesuffix(r"\Z")
            yield from leaves(pattern.url_patterns, prefix + str(pattern.pattern), regex + part)
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), re.compile("^" + regex + part)


def sample(route: str) -> str | None:
    if route.startswith("^"):  # a regular-expression route: no sample to make
        return None
    return "/" + PARAMETER.sub(lambda m: SAMPLES.get(m["converter"] or "str", "x"), route)


def overlaps(routes) -> list[tuple[str, list[str]]]:
    """Sample paths matched by more than one route."""
    routes = list(routes)
    found = []
    for route, _ in routes:
        path = sample(route)
        if path is None:
            continue
        matching = [other for other, regex in routes if regex.match(path[1:])]
        if len(matching) > 1:
            found.append((path, matching))
    return found


def test_no_two_api_routes_match_the_same_path():
    routes = list(leaves(get_resolver().url_patterns))
    api = [(route, regex) for route, regex in routes if route.startswith("api/")]
    assert len(api) > 20
    assert [(p, m) for p, m in overlaps(routes) if p.startswith("/api/")] == []


def view_of(path: str) -> str:
    return resolve(path).func.view_class.__name__


def test_the_hot_paths_reach_their_views():
    assert view_of("/api/flights") == "FlightSearchApi"
    assert view_of("/api/flights/7/seats") == "SeatMapApi"
    assert view_of("/api/bookings") == "BookingListCreateApi"
    assert view_of("/api/flights/7/waitlist") not in {"SeatMapApi", "FlightDetailApi"}


def test_control_a_shadowing_route_is_found():
    routes = list(leaves(get_resolver().url_patterns))
    shadow = "api/bookings/<str:anything>"
    routes.append((shadow, re.compile(r"^api/bookings/(?P<anything>[^/]+)\Z")))
    assert any(shadow in matching for _, matching in overlaps(routes))
