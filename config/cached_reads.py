"""A cached seat map (a flight's or an event's) answered without URL resolution and DRF
(issue 26).

A warm seat map or its 304 is one Redis read, yet it walked the whole request: the middleware
chain, URL resolution, DRF's dispatch (a `Request`, negotiation, permission and throttle
objects).  `CachedReadMiddleware` sits right after the request id and the metrics.  For an
anonymous, cookie-less `GET` of a seat map with no query that the cache answers fresh, it
answers itself, through the same code the long way runs:

* the request id, the access log line and the request metric: the middlewares outside it;
* every hook-style middleware after it (security headers and the SSL redirect, the host
  check and Content-Length, sessions and the anonymous user, which write `Vary: Cookie`,
  the locale and `Content-Language`, X-Frame-Options...): their own `process_request` and
  `process_response`, in the lean chain's order and nesting (`MergedHooks`), the same
  instances' hooks whatever the settings say is in MIDDLEWARE; run for real the first time
  a request shape (every input they read) meets them, then replayed (config/hook_replay.py);
* the body and the ETag: the view's selector (`cached_seat_map_json` of flights.selectors or
  events.seat_map, the cache half of its `seat_map_json`) and `cached_json_response`; DRF's
  own `finalize_response` of the view class adds its headers (`Allow`).  A 304 depends on
  nothing but the view and the ETag (`_bare`): once replayed, it is kept finished per request
  shape and ETag, and the view is not even asked again (config/hook_replay.py).

What it does not run, each because it does nothing for such a request: URL resolution (the
match is remembered per path; its view class decides, not a second pattern), DRF's dispatch
(the view is `AllowAny` and has no throttle: checked per request; authentication runs only
with an `Authorization` header, which goes the long way; negotiation: only Accept headers DRF
answers with the JSON renderer unparsed), CSRF's `process_view` (the view is exempt),
django-axes' layer (it acts only on a login that failed) and what LEAN_API_SKIPS skips for a
cookie-less API request.  A middleware after this one that is neither hook-style nor known
here turns the fast path off at load: the safe default.

Anything else takes the long way unchanged: a cookie, credentials, a query, HEAD or another
method, another Accept, a miss or a stale entry (whose rebuild `seat_map_json` arranges), a
flight or event this process has not met yet, Redis down.  tests/api/test_cached_reads.py compares
both ways' answers byte for byte, with controls.  `CACHED_READ_FAST_PATH=false` turns it off.
"""

from __future__ import annotations

import logging

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.middleware.csrf import CsrfViewMiddleware
from django.urls import get_urlconf
from django.utils.deprecation import MiddlewareMixin
from django.utils.module_loading import import_string
from rest_framework.permissions import AllowAny

from config.hook_replay import HookReplay
from config.lean_chain import takes_lean_chain
from config.url_match import match_or_none
from events import seat_map as event_seat_map
from events.api import EventSeatMapApi
from flights.api import SeatMapApi
from flights.selectors import cached_seat_map_json
from kernel.web.negotiation import takes_first_renderer
from kernel.web.renderers import cached_json_response, etag_known_to

logger = logging.getLogger(__name__)

# Middlewares after this one that are not hook-style, and why a cached read may pass them by.
PASSED_BY = {
    # Turns a login that axes refused (`request.axes_locked_out`, set by its authentication
    # backend) into the 429; a cached read authenticates nobody.
    "axes.middleware.AxesMiddleware",
}
# Of the hook-style ones, those with a `process_view` a cached read may pass by.
VIEW_HOOKS_PASSED_BY = (CsrfViewMiddleware,)  # returns at once for an exempt view (DRF's)

# The views answered here: (view class, the cache read of its answer from the match's kwargs).
READS = {
    SeatMapApi: lambda kwargs, known: cached_seat_map_json(
        flight_id=kwargs["flight_id"], known=known
    ),
    EventSeatMapApi: lambda kwargs, known: event_seat_map.cached_seat_map_json(
        event_id=kwargs["event_id"], known=known
    ),
}


class CachedReadMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        # Under ASGI the chain below is sync too (the outage middleware is sync-only), so this
        # runs in the same thread as the hooks would; were it async, the long way only.
        if iscoroutinefunction(get_response) or not settings.CACHED_READ_FAST_PATH:
            raise MiddlewareNotUsed
        hooks = _hooks_after(f"{__name__}.{type(self).__qualname__}")
        if hooks is None:
            raise MiddlewareNotUsed
        self.get_response = get_response
        # Run once per request shape, then replayed; a 304, then kept finished (`_bare`).
        self.hooks = HookReplay(hooks, _answer, bare=_bare)

    def __call__(self, request):
        read = cached_read(request)
        if read is None:
            # Served by config/served.py, a request that might have been a cached read comes
            # here without Django's `request_started`: the long way sends it before anything
            # else runs (its connections checked as every request's are).
            start_deferred = getattr(request, "start_deferred", None)
            if start_deferred is not None:
                start_deferred()
            return self.get_response(request)
        request.cached_read = read
        return self.hooks(request)


def cached_read(request):
    """(the URL's match, the cached answer) when this request may take the fast path."""
    meta = request.META
    if (
        request.method != "GET"
        or meta.get("QUERY_STRING")
        or meta.get("HTTP_AUTHORIZATION")
        or not takes_lean_chain(request)  # under /api/, no cookie
    ):
        return None
    match = match_or_none(get_urlconf(), request.path_info)  # config/url_match.py
    read = READS.get(getattr(match.func, "view_class", None)) if match else None
    if read is None or not _plain_public_read(match.func):
        return None
    view = match.func.view_class
    if not takes_first_renderer(meta.get("HTTP_ACCEPT"), view.renderer_classes[0].media_type):
        return None
    try:
        found = read(match.kwargs, etag_known_to(request))
    except Exception:  # the long way meets it again and answers as it always has
        logger.warning("cached read: the cache failed; the long way answers", exc_info=True)
        return None
    return None if found is None else (match, found)


def _plain_public_read(view) -> bool:
    """Nothing of DRF's dispatch can refuse it: no throttle, anyone may read, CSRF-exempt."""
    cls = view.view_class
    return (
        getattr(view, "csrf_exempt", False)
        and not cls.throttle_classes
        and list(cls.permission_classes) == [AllowAny]
    )


def _answer(request):
    """What the view and DRF's `finalize_response` answer, from the cached read."""
    match, found = request.cached_read
    request.resolver_match = match  # as URL resolution leaves it: the metric's route
    response = cached_json_response(request, body=found.body, etag=found.etag)
    view = match.func.view_class(**match.func.view_initkwargs)
    view.setup(request, *match.args, **match.kwargs)  # as Django's `as_view` (adds `head`)
    view.headers = view.default_response_headers  # as DRF's dispatch
    response = view.finalize_response(request, response)
    # `setup` bound the view's `get` to its `head`: a reference cycle (view, request, the
    # cached body) that only the cyclic collector would free, the fewer allocations a read
    # makes the later, and the more bodies at once (web RSS).  Freed now instead.
    vars(view).pop("head", None)
    return response


def _bare(request):
    """For a 304, what decides `_answer`'s answer: the view (class and init kwargs: `Allow`)
    and the ETag; `cached_json_response` and `finalize_response` read nothing else of the
    request.  None for a 200.  The route noted as `_answer` notes it (the request metric's)."""
    match, found = request.cached_read
    if found.body is not None:
        return None
    request.resolver_match = match
    return match.func, found.etag


def _hooks_after(own: str) -> list | None:
    """Instances of the hook-style middlewares after `own` that a cookie-less API request
    meets (MIDDLEWARE less LEAN_API_SKIPS), in order; None if another kind is among them."""
    paths = settings.MIDDLEWARE
    skips = set(settings.LEAN_API_SKIPS)
    hooks = []
    for path in paths[paths.index(own) + 1 :]:
        if path in skips or path in PASSED_BY:
            continue
        cls = import_string(path)
        if not (issubclass(cls, MiddlewareMixin) and cls.__call__ is MiddlewareMixin.__call__):
            logger.warning("cached reads: %s is not known to be inert; fast path off", path)
            return None
        if hasattr(cls, "process_view") and not issubclass(cls, VIEW_HOOKS_PASSED_BY):
            logger.warning("cached reads: %s has a view hook; fast path off", path)
            return None
        if hasattr(cls, "process_template_response") or hasattr(cls, "process_exception"):
            logger.warning("cached reads: %s has hooks a view needs; fast path off", path)
            return None
        hooks.append(cls(_answer))
    return hooks
