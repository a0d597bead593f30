"""`reverse(name, args=[object_id])` for a route of one integer id, from a template worked out
once per name, script prefix and URL conf (and language, where the URL conf's routes depend on
it): Django's `reverse` was ~90 Python calls each (resolver lookups, the converters, quoting),
and the hold's answer and the pay request each built one or two per request (issue 26).

The template is Django's own reverse of an id no object has (`_ID_SENTINEL`), cut where the id
goes; an int's URL form is its digits, which is all `<int:...>` writes.  A route whose URL does
not hold the sentinel exactly once (not a route of one id) is refused.  A URL conf with
`i18n_patterns` or translated routes makes the current language part of the key (checked
once per URL conf by walking its patterns, not by reversing in every language: each language
reversed fills a resolver of its own, ~2.7 MB a process for every namespace).
"""

from __future__ import annotations

import functools

from django.conf import settings
from django.urls import (
    LocalePrefixPattern,
    URLResolver,
    get_resolver,
    get_script_prefix,
    get_urlconf,
    reverse,
)
from django.utils.functional import Promise
from django.utils.translation import get_language

_ID_SENTINEL = "2000000011"  # an id no object has: where the id goes in a URL template


def id_url(name: str, object_id: int) -> str:
    """`reverse(name, args=[object_id])` for a route of one integer id."""
    urlconf = get_urlconf() or settings.ROOT_URLCONF
    language = get_language() if _language_dependent(urlconf) else None
    head, tail = _url_template(name, get_script_prefix(), urlconf, language)
    return f"{head}{int(object_id)}{tail}"


@functools.lru_cache(maxsize=64)
def _url_template(name: str, script_prefix: str, urlconf: str, language: str | None):
    url = reverse(name, args=[int(_ID_SENTINEL)], urlconf=urlconf)
    head, found, tail = url.partition(_ID_SENTINEL)
    if not found or _ID_SENTINEL in tail:
        raise ValueError(f"{name}: not a route of one id ({url})")
    return head, tail


@functools.lru_cache(maxsize=8)
def _language_dependent(urlconf) -> bool:
    return routes_depend_on_language(get_resolver(urlconf).url_patterns)


def routes_depend_on_language(patterns) -> bool:
    """Whether any of these routes resolves or reverses differently by language: a language
    prefix (`i18n_patterns`) or a translated (lazy) route."""
    for pattern in patterns:
        matcher = pattern.pattern
        if isinstance(matcher, LocalePrefixPattern):
            return True
        route = getattr(matcher, "_route", None) or getattr(matcher, "_regex", None)
        if isinstance(route, Promise):
            return True
        if isinstance(pattern, URLResolver) and routes_depend_on_language(pattern.url_patterns):
            return True
    return False
