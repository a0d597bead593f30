"""A URL's match, remembered per URL resolver and path (issue 26).

Django resolves every request's path anew: for the hold POST ~124 Python calls (the patterns
tried in order, the converters, a `ResolverMatch` built).  The served handler
(config/served.py `ServedHandler.resolve_request`) and the cached reads (config/cached_reads.py)
both ask here instead; the answer is the `ResolverMatch` Django's resolver gave the first time.

* **Only matches are remembered.**  A miss raises Django's own `Resolver404` from Django's own
  resolver every time (`lru_cache` keeps no exception), so a 404 (its `tried` list, the debug
  page, `handler404`) stays exactly Django's, and paths that match nothing, which are the
  client's to make up, never fill the memo.
* **As fresh as Django's resolver.**  The memo is kept per `URLResolver` object, the one
  `get_resolver` returns: `clear_url_caches()` (which `override_settings(ROOT_URLCONF=...)`
  calls through `setting_changed`) makes Django build a new resolver, and so a new memo; the
  old ones are dropped on that setting change too, and are a bounded few anyway.
* **A URL conf whose routes depend on the language** (`i18n_patterns`, a translated route)
  is resolved by Django every time: a path's match would depend on the active language.
* **One `ResolverMatch`, shared between requests: nothing may change it.**  Checked: Django
  hands the view `*args, **kwargs` (copies; DRF's `self.args`/`self.kwargs` are those copies);
  the `process_view` hooks in our chain (CSRF's, auth's `LoginRequiredMiddleware` were it on)
  only read `callback_args`/`callback_kwargs`; DRF (versioning, viewsets, relations), the
  admin, sentry and our MetricsMiddleware only read `request.resolver_match`; hook replay
  sets the request's attribute, never the match's.  A middleware that mutated
  `callback_kwargs` would change the next request's: none may (tests/project/test_url_match.py).
"""

from __future__ import annotations

import functools

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.urls import Resolver404, ResolverMatch, get_resolver

from kernel.web.id_urls import routes_depend_on_language

PATHS_PER_RESOLVER = 4096  # bounded: a path that matches (ids in it) is still the client's


def remembered_match(urlconf, path: str) -> ResolverMatch:
    """`get_resolver(urlconf).resolve(path)`, a match remembered; a miss is Django's
    `Resolver404`, raised by Django's resolver."""
    return _resolve_for(get_resolver(urlconf))(path)


def match_or_none(urlconf, path: str) -> ResolverMatch | None:
    """The remembered match, or None where nothing matches."""
    try:
        return remembered_match(urlconf, path)
    except Resolver404:
        return None


@functools.lru_cache(maxsize=8)
def _resolve_for(resolver):
    """The resolve to call for `resolver`'s paths: remembering, unless routes need the
    language."""
    if routes_depend_on_language(resolver.url_patterns):
        return resolver.resolve
    return functools.lru_cache(maxsize=PATHS_PER_RESOLVER)(resolver.resolve)


@receiver(setting_changed)
def _forget_matches(*, setting, **kwargs):
    if setting == "ROOT_URLCONF":
        _resolve_for.cache_clear()
