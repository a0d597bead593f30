"""A shorter middleware chain for API requests that carry no cookie (issue 26).

A token client's request (a partner, an app, the bench: `Authorization: Token …`, or no
credentials at all for a public read) walks the same fourteen middlewares as a page.  For such
a request several of them do nothing: no static file lives under /api/ (WhiteNoise), no API
view adds a Django message (messages), and the database-outage middleware is only a
`process_exception` hook, which the handler keeps for every request.  Each layer still costs
its wrappers, and Django's hook-style middlewares each cost two more frames per request.

`LeanApiMiddleware` is the first middleware.  At load it builds a second chain from the same
classes, in the same order, without those in `settings.LEAN_API_SKIPS`, and with every run of
hook-style middlewares (`MiddlewareMixin` subclasses that keep its `__call__`) merged into one
layer that calls their own `process_request` / `process_response`, so each behaviour keeps its
one definition.  A request to /api/ with no `Cookie` header takes that chain; every other
request (pages, and API calls from the browser, which carry the session and CSRF cookies)
takes Django's chain exactly as before.  Both chains end in the same handler, so URL
resolution, the view hooks (CSRF's `process_view`, the outage's `process_exception`) and the
view are the same.

Without a cookie the dropped layers cannot matter: sessions, CSRF and messages read theirs
only from the Cookie header, and the session, CSRF and authentication layers still run (an
anonymous customer's answer keeps `Vary: Cookie`, a CSRF cookie made by a view is still set).
tests/project/test_lean_chain.py sends the same requests through both chains and compares
every status, header and byte, with a control that drops a header-writing middleware.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.core.handlers.base import BaseHandler
from django.core.handlers.exception import convert_exception_to_response, response_for_exception
from django.utils.deprecation import MiddlewareMixin
from django.utils.module_loading import import_string

API_PREFIX = "/api/"


def takes_lean_chain(request) -> bool:
    """An API request with no cookie at all: nothing a session, CSRF or messages layer reads."""
    return request.path_info.startswith(API_PREFIX) and not request.META.get("HTTP_COOKIE")


class LeanApiMiddleware:
    """First in MIDDLEWARE: the lean chain for `takes_lean_chain` requests, Django's for the
    rest.  Under ASGI (the handler's own end is async, behind Django's adapter) every request
    takes Django's chain: the HTTP nodes serve WSGI (granian), the ASGI tier the sockets."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.lean = None
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)
        elif getattr(settings, "LEAN_API_REQUESTS", False):
            self.lean = lean_chain(get_response)

    def __call__(self, request):
        if self.lean is not None and takes_lean_chain(request):
            return self.lean(request)
        return self.get_response(request)


def lean_chain(full_chain):
    """The chain below this middleware built again without `LEAN_API_SKIPS`, hook-style runs
    merged; None if the chain's end (the handler's `_get_response`) cannot be found."""
    handler = _innermost(full_chain)
    if handler is None:
        return None
    skips = set(settings.LEAN_API_SKIPS)
    paths = settings.MIDDLEWARE
    own = f"{LeanApiMiddleware.__module__}.{LeanApiMiddleware.__qualname__}"
    classes = [import_string(p) for p in paths[paths.index(own) + 1 :] if p not in skips]
    chain = convert_exception_to_response(handler)
    for group in reversed(_runs(classes)):
        if len(group) == 1:
            try:
                layer = group[0](chain)
            except MiddlewareNotUsed:  # as Django's chain leaves it out
                continue
        else:
            layer = MergedHooks([cls(chain) for cls in group], chain)
        chain = convert_exception_to_response(layer)
    return chain


def _runs(classes: list) -> list[list]:
    """Consecutive hook-style middlewares grouped; any other class alone."""
    groups: list[list] = []
    previous_hooks = False
    for cls in classes:
        hooks = issubclass(cls, MiddlewareMixin) and cls.__call__ is MiddlewareMixin.__call__
        if hooks and previous_hooks:
            groups[-1].append(cls)
        else:
            groups.append([cls])
        previous_hooks = hooks
    return groups


def _innermost(chain):
    """Follow each layer's `get_response` (Django wraps every middleware with `@wraps`, so
    `__wrapped__` is the instance) down to the handler's own sync `_get_response`; None if
    the way down ends elsewhere (under ASGI: in Django's async-to-sync adapter)."""
    step = chain
    for _ in range(100):
        target = getattr(step, "__wrapped__", step)
        if isinstance(getattr(target, "__self__", None), BaseHandler):
            return target
        step = getattr(target, "get_response", None)
        if step is None:
            return None
    return None


class MergedHooks:
    """Hook-style middlewares as one layer: what Django's nesting of them does (each one's
    `MiddlewareMixin.__call__` inside `convert_exception_to_response`), without the two frames
    per middleware.  A `process_request` answer skips the inner ones and the view but still
    meets its own and the outer ones' `process_response`; an exception in a hook becomes
    Django's response for it (`response_for_exception`), which the outer ones then see."""

    def __init__(self, middlewares: list, get_response):
        self.middlewares = middlewares
        self.get_response = get_response
        self.requests = [getattr(m, "process_request", None) for m in middlewares]
        self.responses = [getattr(m, "process_response", None) for m in middlewares]

    def __call__(self, request):
        response = None
        entered = 0  # how many have run process_request without raising
        for process_request in self.requests:
            if process_request is not None:
                try:
                    response = process_request(request)
                except Exception as exc:
                    response = response_for_exception(request, exc)
                    break
            entered += 1
            if response:
                break
        else:
            response = self.get_response(request)
        for process_response in reversed(self.responses[:entered]):
            if process_response is not None:
                try:
                    response = process_response(request, response)
                except Exception as exc:
                    response = response_for_exception(request, exc)
        return response
