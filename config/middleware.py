"""Request id and request metrics, outermost in MIDDLEWARE."""

from __future__ import annotations

import logging
import time

from django.utils.log import log_response

from config import metrics
from config.request_id import HEADER, accept_or_new, reset_request_id, set_request_id

access_log = logging.getLogger("seatkeeper.requests")


class RequestIdMiddleware:
    """Take the caller's X-Request-ID when it is sane, else make one; every log line of the
    request carries it, tasks it queues inherit it, and the response returns it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = accept_or_new(request.headers.get(HEADER))
        request.request_id = request_id
        token = set_request_id(request_id)
        try:
            response = self.get_response(request)
            if response.status_code >= 400:
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
