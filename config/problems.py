"""RFC 9457 problem details, shared by the REST API and the webhook endpoints."""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse

from kernel.errors import DomainError

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://seatkeeper.dev/problems/"


def problem_body(
    *, status: int, title: str, detail: str | None = None, code: str | None = None, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + code if code else "about:blank",
        "title": title,
        "status": status,
    }
    if detail:
        body["detail"] = detail
    body.update(extra)
    return body


def problem_response(
    *, status: int, title: str, detail: str | None = None, code: str | None = None, **extra: Any
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
