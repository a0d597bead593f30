"""Request id and request metrics (outermost in MIDDLEWARE), and the pages' answer to a
database outage (innermost).

The outage answer is the friendly 503 page, never Django's 500.  The API gets the same decision
from its exception handler (`config.api.exceptions`); both ask `service_unavailable`, the one
place that maps an outage to 503.  Failures outside any view (a middleware reading the session)
reach `config.api.exceptions.server_error`, which asks too.
"""

from __future__ import annotations

import logging
import time

from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject, empty
from django.utils.log import log_response, request_logger

from config import metrics
from config.api.exceptions import unavailable_response
from config.logging_filters import EXPECTED_STATUSES, SkipExpectedConflicts
from config.logs import quick_caller
from config.request_id import HEADER, accept_or_new, reset_request_id, set_request_id
from kernel.web.headers import header

# One line a request: its caller found without Python calls (config/logs.py).
access_log = quick_caller(logging.getLogger("seatkeeper.requests"))


class RequestIdMiddleware:
    """Take the caller's X-Request-ID when it is sane, else make one; every log line of the
    request carries it, tasks it queues inherit it, and the response returns it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = accept_or_new(header(request, HEADER))
        request.request_id = request_id
        token = set_request_id(request_id)
        try:
            response = self.get_response(request)
            if response.status_code >= 400 and _line_is_dropped(response.status_code):
                # A race's loser (409): the line the logging filter would drop is not made
                # at all (a record, its request id and the filter, hundreds per sale).
                response._has_been_logged = True
            elif response.status_code >= 400:
                # Django logs 4xx/5xx after the middleware chain returns, outside this
                # request's id; log here (it marks the response as logged) so the line has it.
                log_response(
                    "%s: %s",
                    response.reason_phrase,
                    request.path,
                    response=response,
                    request=request,
                )
        finally:
            reset_request_id(token)
        response[HEADER] = request_id
        return response


def _line_is_dropped(status: int) -> bool:
    """Whether `django.request`'s line for `status` would be dropped by the filter that
    settings.LOGGING puts on it (config/logging_filters.py): that filter stays the rule."""
    return status in EXPECTED_STATUSES and any(
        isinstance(f, SkipExpectedConflicts) for f in request_logger.filters
    )


class MetricsMiddleware:
    """Requests and latency by route pattern (never the raw path: ids would explode the
    series), every 503 answered as "too busy", and one access log line per request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = (match.route or match.view_name) if match else "unmatched"
        seconds = time.perf_counter() - started
        metrics.observe_request(
            route=route, method=request.method, status=response.status_code, seconds=seconds
        )
        access_log.info(
            "%s %s %s",
            request.method,
            request.path,
            response.status_code,
            extra={
                "method": request.method,
                "path": request.path,
                "route": route,
                "status": response.status_code,
                "duration_ms": round(seconds * 1000, 1),
            },
        )
        return response


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        # None (not an outage): Django's usual handling, and a bug stays a 500.
        return unavailable_response(request, exception)


class LazyMessageMiddleware(MessageMiddleware):
    """Django's, with the message storage made when something first uses it: the API and
    most page requests never add or show a message, and made eagerly it reads its cookie and
    builds two storages on every request (issue 26)."""

    def process_request(self, request):
        request._messages = SimpleLazyObject(lambda: default_storage(request))

    def process_response(self, request, response):
        messages = getattr(request, "_messages", None)
        if isinstance(messages, SimpleLazyObject) and messages._wrapped is empty:
            return response  # never used: nothing to store, as Django's would find
        return super().process_response(request, response)
