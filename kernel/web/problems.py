"""RFC 9457 problem details, shared by the REST API and the webhook endpoints.

`title` and `detail` are in the request's language (Accept-Language, via LocaleMiddleware):
lazy translations are resolved here, so a body is always plain JSON-ready strings."""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse
from django.utils.functional import Promise

from kernel.errors import DomainError

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://seatkeeper.dev/problems/"


def problem_body(
    *,
    status: int,
    title: str | Promise,
    detail: str | Promise | None = None,
    code: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + code if code else "about:blank",
        "title": str(title),
        "status": status,
    }
    if detail:
        body["detail"] = str(detail)
    body.update(extra)
    return body


def problem_response(
    *,
    status: int,
    title: str | Promise,
    detail: str | Promise | None = None,
    code: str | None = None,
    **extra: Any,
) -> JsonResponse:
    return JsonResponse(
        problem_body(status=status, title=title, detail=detail, code=code, **extra),
        status=status,
        content_type=PROBLEM_CONTENT_TYPE,
    )


def domain_error_response(error: DomainError) -> JsonResponse:
    return problem_response(
        status=error.status, title=error.title, detail=error.detail, code=error.code, **error.extra
    )
