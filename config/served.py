"""What the HTTP nodes serve (config/wsgi.py): Django's WSGI handler, less two per-request
costs of the served path that no client sees (issue 26).

Measured in the served stack (docs/performance.md, "the server's share"), a warm seat map
answered by config/cached_reads.py spent about as much around the answer as in it: Django's
request signals, and granian walking the response as an iterator.

* **A plain response's body is handed over as one bytes list.**  granian writes a list in one
  call; any other iterable it drives through the iterator protocol and then calls `close()`.
  For an `HttpResponse` with its Content-Length (whose content is bytes already) this handler
  closes the response itself, as the server would after writing it (`request_finished` is
  sent, the request's resources are freed), and returns `[content]`.  Streaming and file
  responses, and any without a Content-Length (see `as_served`), are returned as Django
  returns them.
* **A cached read sends no request signals.**  `request_started` and `request_finished` are
  there for the database connections (`close_old_connections`: drop a broken one or one past
  CONN_MAX_AGE, around each request), the queries log, the caches' `close` and the thread's
  URLconf.  A read that config/cached_reads.py answers from Redis uses none of them, so for a
  request that may take that path (`may_be_cached_read`: a cookie-less, credential-less GET
  under /api/ with no query) `request_started` is deferred: the request goes down the
  middleware chain without it, and `CachedReadMiddleware` sends it (`start_deferred`) before
  it passes the request on to the long way, that is before any view, hook or database query;
  `request_finished` follows when the response closes, as always.  When the fast path answers,
  neither is sent.  Only when the chain such a request takes reaches `CachedReadMiddleware`
  through layers known not to touch the database (`BEFORE_THE_FAST_PATH`: the lean chain's
  switch, the request id, the metric and access log line); otherwise (the fast path off, a
  middleware added in between) every request sends both signals as Django's handler does.
* **A URL's match is remembered.**  `resolve_request` asks config/url_match.py, which keeps
  the match Django's resolver gave for the path (~124 Python calls a hold POST otherwise); a
  miss is Django's own resolver raising Django's `Resolver404`, and a request with its own
  `urlconf` (set by a middleware) is resolved as Django does.

Statuses, headers in order, cookies, bodies, the access log line and the metric are the same
as Django's own handler gives: tests/project/test_served.py sends the cached reads' request
shapes through both, with controls.
"""

from __future__ import annotations

from django.core import signals
from django.core.handlers.wsgi import WSGIHandler, get_script_name
from django.http import HttpResponse
from django.urls import set_script_prefix

from config.cached_reads import CachedReadMiddleware
from config.lean_chain import API_PREFIX, LeanApiMiddleware
from config.middleware import MetricsMiddleware, RequestIdMiddleware
from config.url_match import remembered_match

# The layers a request meets before the fast path, none of which touches the database.
BEFORE_THE_FAST_PATH = (LeanApiMiddleware, RequestIdMiddleware, MetricsMiddleware)


def may_be_cached_read(environ) -> bool:
    """What `config.cached_reads.cached_read` asks first, from the WSGI environ: it may yet
    say no (and then the long way sends `request_started` before anything else runs)."""
    return (
        environ.get("REQUEST_METHOD") == "GET"
        and not environ.get("QUERY_STRING")
        and not environ.get("HTTP_COOKIE")
        and not environ.get("HTTP_AUTHORIZATION")
        and environ.get("PATH_INFO", "").startswith(API_PREFIX)
    )


class ServedHandler(WSGIHandler):
    defers_start = False

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async)
        self.defers_start = not is_async and fast_path_first(self._middleware_chain)

    def resolve_request(self, request):
        if hasattr(request, "urlconf"):
            return super().resolve_request(request)
        # Django's `get_resolver()`: the URL conf is settings.ROOT_URLCONF.  The match is
        # shared between requests and nothing changes it (config/url_match.py says why).
        match = remembered_match(None, request.path_info)
        request.resolver_match = match
        return match

    def __call__(self, environ, start_response):
        if not (self.defers_start and may_be_cached_read(environ)):
            return as_served(super().__call__(environ, start_response))
        # Django's own __call__ (django.core.handlers.wsgi), with `request_started` deferred.
        set_script_prefix(get_script_name(environ))
        request = self.request_class(environ)
        started = DeferredStart(type(self), environ)
        request.start_deferred = started
        response = self.get_response(request)
        response._handler_class = self.__class__
        status = f"{response.status_code} {response.reason_phrase}"
        response_headers = [
            *response.items(),
            *(("Set-Cookie", c.output(header="")) for c in response.cookies.values()),
        ]
        start_response(status, response_headers)
        fast_answer = getattr(request, "cached_read", None) and not started.sent
        if not (fast_answer and response.has_header("Content-Length")):
            return as_served(response)  # closed (now or by the server): `request_finished`
        # The fast path answered: the request's resources freed (what `close()` does first),
        # no `request_finished`.
        content = response.content
        for closer in response._resource_closers:
            closer()
        response._resource_closers.clear()
        return [content]


def fast_path_first(chain) -> bool:
    """Whether a cookie-less API request meets `CachedReadMiddleware` in `chain` (the lean
    chain where it is on) after `BEFORE_THE_FAST_PATH` layers only."""
    step = chain
    for _ in range(20):
        layer = getattr(step, "__wrapped__", step)  # Django's exception wrapper (`@wraps`)
        if isinstance(layer, CachedReadMiddleware):
            return True
        if not isinstance(layer, BEFORE_THE_FAST_PATH):
            return False
        lean = getattr(layer, "lean", None)
        step = lean if lean is not None else layer.get_response
    return False


class DeferredStart:
    """`request_started`, sent once, when the request turns out to need it."""

    __slots__ = ("environ", "sender", "sent")

    def __init__(self, sender, environ):
        self.sender, self.environ, self.sent = sender, environ, False

    def __call__(self) -> None:
        if not self.sent:
            self.sent = True
            signals.request_started.send(sender=self.sender, environ=self.environ)


def as_served(response):
    """A plain response with its Content-Length as one bytes list (closed now, as the server
    would close it after writing it); anything else as Django returns it.  Without the header
    (a response made outside CommonMiddleware, e.g. the SSL redirect) granian frames a list
    with a Content-Length it adds but an iterator in chunks: those stay iterators, so the
    bytes on the wire are the same."""
    if isinstance(response, HttpResponse) and response.has_header("Content-Length"):
        content = response.content
        response.close()
        return [content]
    return response
