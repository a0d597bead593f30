"""Every API error as RFC 9457 problem details (`application/problem+json`).

DRF's own exceptions, Django's Http404/PermissionDenied and our DomainErrors all leave through
`problem_exception_handler`; URLs that match no view get the same shape from the 404/500
handlers when they are under /api/.  Anything else (a bug) stays a 500 for Django to report.
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError, connections
from django.http import Http404, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.translation import gettext_lazy as _
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from kernel.dbfaults import discard_broken_connections, is_database_unavailable
from kernel.errors import DomainError, TooBusy
from kernel.web.problems import PROBLEM_CONTENT_TYPE, problem_body, problem_response
from kernel.web.renderers import CamelJSONRenderer

TITLES = {
    "invalid": ("invalid-request", _("Invalid request")),
    "parse_error": ("malformed-request", _("Malformed request body")),
    "authentication_failed": ("authentication-failed", _("Authentication failed")),
    "not_authenticated": ("not-authenticated", _("Authentication required")),
    "permission_denied": ("permission-denied", _("Permission denied")),
    "not_found": ("not-found", _("Not found")),
    "method_not_allowed": ("method-not-allowed", _("Method not allowed")),
    "not_acceptable": ("not-acceptable", _("Not acceptable")),
    "unsupported_media_type": ("unsupported-media-type", _("Unsupported media type")),
    "request_too_large": ("request-too-large", _("Request body too large")),
    "throttled": ("throttled", _("Too many requests")),
}
# How long a client should wait before retrying after a lock timeout (503 TooBusy).
TOO_BUSY_RETRY_AFTER_SECONDS = 1
# ... and after the database went away (restart, failover, full): it is usually back in seconds.
UNAVAILABLE_RETRY_AFTER_SECONDS = 2


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = _("The request body is too large.")
    default_code = "request_too_large"


_CAMEL_RE = re.compile(r"_([a-z0-9])")


def camel(name: str) -> str:
    return _CAMEL_RE.sub(lambda m: m.group(1).upper(), name)


def invalid_params(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    """Flatten DRF's nested error detail into RFC 9457's `invalid-params` list.

    Names are the camelCase paths the client sent (`seats[1]`, `passengerNames[0]`); errors
    not tied to one field get the name of the enclosing object, or "" for the whole body.
    """
    if isinstance(detail, dict):
        params: list[dict[str, str]] = []
        for key, value in detail.items():
            if key == "non_field_errors":
                params += invalid_params(value, prefix)
            elif isinstance(key, int):  # ListField reports items as {index: errors}
                params += invalid_params(value, f"{prefix}[{key}]")
            else:
                name = camel(str(key))
                params += invalid_params(value, f"{prefix}.{name}" if prefix else name)
        return params
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            return [{"name": prefix, "reason": str(item)} for item in detail]
        params = []
        for index, item in enumerate(detail):
            if item:  # a list of per-item errors has {} / [] for the items that were fine
                params += invalid_params(item, f"{prefix}[{index}]")
        return params
    return [{"name": prefix, "reason": str(detail)}]


def _validation_body(exc: exceptions.ValidationError) -> dict[str, Any]:
    params = invalid_params(exc.detail)
    first = params[0] if params else {"name": "", "reason": str(_("Invalid request."))}
    detail = f"{first['name']}: {first['reason']}" if first["name"] else first["reason"]
    return problem_body(
        status=400,
        title=_("Invalid request"),
        detail=detail,
        code="invalid-request",
        invalid_params=params,
    )


class RenderedProblem(HttpResponse):
    """A problem rendered at once by the request's negotiated renderer: the bytes and headers
    DRF's `Response` would give, without its template-response round (made, negotiated again,
    rendered when finalized), for the answer most of a sale's losers get (issue 26).  `data`
    is the body, as on DRF's `Response`."""

    def __init__(self, body: dict[str, Any], *, status: int, context: dict[str, Any]) -> None:
        request = context["request"]
        content = request.accepted_renderer.render(body, request.accepted_media_type, context)
        super().__init__(content, status=status, content_type=PROBLEM_CONTENT_TYPE)
        self.data = body


def _renders_at_once(context: dict[str, Any]) -> bool:
    # After content negotiation, with the API's own renderer; anything else goes DRF's way.
    renderer = getattr(context.get("request"), "accepted_renderer", None)
    return isinstance(renderer, CamelJSONRenderer)


def _domain_error(exc: DomainError, context: dict[str, Any]) -> HttpResponse:
    body = problem_body(
        status=exc.status, title=exc.title, detail=exc.detail, code=exc.code, **exc.extra
    )
    # Domain errors may name a field ("field": "seats"); report it the way DRF errors do.
    if "field" in exc.extra:
        body["invalid_params"] = [
            {"name": camel(str(exc.extra["field"])), "reason": str(exc.detail)}
        ]
    if _renders_at_once(context):
        response = RenderedProblem(body, status=exc.status, context=context)
    else:
        response = Response(body, status=exc.status, content_type=PROBLEM_CONTENT_TYPE)
    if "retryAfter" in exc.extra:
        response["Retry-After"] = str(exc.extra["retryAfter"])
    elif exc.status == 503:
        response["Retry-After"] = str(TOO_BUSY_RETRY_AFTER_SECONDS)
    return response


def is_pool_timeout(exc: BaseException) -> bool:
    """Every pooled connection of this process stayed busy for DB_POOL_TIMEOUT_SECONDS."""
    return isinstance(exc, OperationalError) and type(exc.__cause__).__name__ == "PoolTimeout"


def service_unavailable(exc: BaseException) -> dict[str, Any] | None:
    """The one mapping of "our infrastructure failed, not you" to 503: the body of the
    problem, or None when `exc` is something else.  The API, the pages' middleware and the
    500 handler all ask here (so do the deadlock/"too busy" paths through `TooBusy`)."""
    if not is_database_unavailable(exc):
        return None
    # The connection that saw the outage is dead: never hand it to the next request.
    discard_broken_connections()
    return problem_body(
        status=503,
        title=_("Service unavailable"),
        detail=_(
            "We cannot reach our database for a moment. Retry shortly; a write retried "
            "with the same Idempotency-Key is applied at most once."
        ),
        code="service-unavailable",
        retry_after=UNAVAILABLE_RETRY_AFTER_SECONDS,
    )


def set_rollback() -> None:
    """DRF's `set_rollback` (mark a request's atomic block for rollback), asking the settings
    before the connections: DRF's builds every alias's connection object (`connections.all()`)
    on every domain error, a sale's losers included, where only an alias with ATOMIC_REQUESTS
    can hold a request's atomic block (none does here: the services open their own)."""
    for alias in connections:
        if connections.settings[alias]["ATOMIC_REQUESTS"]:
            db = connections[alias]
            if db.in_atomic_block:
                db.set_rollback(True)


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if is_pool_timeout(exc):
        # Overload, not a bug: a polite "retry in a moment", as for a lock timeout.
        exc = TooBusy()
    unavailable = service_unavailable(exc)
    if unavailable is not None:
        set_rollback()
        response = Response(unavailable, status=503, content_type=PROBLEM_CONTENT_TYPE)
        response["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER_SECONDS)
        return response
    if isinstance(exc, DomainError):
        set_rollback()  # as DRF does for its own errors, should ATOMIC_REQUESTS ever be on
        return _domain_error(exc, context)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, RequestDataTooBig):  # DATA_UPLOAD_MAX_MEMORY_SIZE, read by DRF
        exc = RequestTooLarge()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    # DRF's handler adds WWW-Authenticate (401) and Retry-After (429) and rolls back the
    # atomic block; we only rewrite the body.
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        body = _validation_body(exc)
    else:
        code, title = TITLES.get(exc.default_code, (exc.default_code.replace("_", "-"), _("Error")))
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        body = problem_body(status=response.status_code, title=title, detail=detail, code=code)
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            body["retry_after"] = max(1, math.ceil(exc.wait))
            response["Retry-After"] = str(body["retry_after"])
    response.data = body
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def not_found(request, exception=None):
    if _is_api(request):
        return problem_response(
            status=404,
            title=_("Not found"),
            detail=_("No API endpoint at this address."),
            code="not-found",
        )
    return defaults.page_not_found(request, exception)


def unavailable_response(request, exc: BaseException | None) -> HttpResponse | None:
    """503 for a database outage outside DRF's views: problem+json under /api/, else the
    pages' "back in a moment" (rendered with no user or session: nothing that needs the
    database).  None when `exc` is not an outage."""
    body = service_unavailable(exc) if exc is not None else None
    if body is None:
        return None
    if _is_api(request):
        response = JsonResponse(body, status=503, content_type=PROBLEM_CONTENT_TYPE)
    else:
        response = HttpResponse(
            render_to_string("503.html", {"retry_after": UNAVAILABLE_RETRY_AFTER_SECONDS}),
            status=503,
        )
    response["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER_SECONDS)
    return response


def server_error(request):
    # Called while the uncaught exception is being handled: a database outage that escaped
    # a middleware or a plain view is still a 503, not a 500.
    unavailable = unavailable_response(request, sys.exc_info()[1])
    if unavailable is not None:
        return unavailable
    if _is_api(request):
        return problem_response(
            status=500,
            title=_("Internal server error"),
            detail=_("Something went wrong on our side; it has been logged."),
            code="server-error",
        )
    return defaults.server_error(request)
