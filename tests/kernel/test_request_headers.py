"""`kernel.web.headers.header` answers what `request.headers.get` answers (issue 26)."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from kernel.web.headers import header

NAMES = [
    "X-Request-ID",
    "x-request-id",
    "If-None-Match",
    "Idempotency-Key",
    "X-Waiting-Room-Token",
    "Content-Type",
    "Content-Length",
    "Authorization",
    "Not-Sent",
]


@pytest.mark.parametrize("name", NAMES)
def test_header_is_what_request_headers_answers(name):
    request = RequestFactory().post(
        "/api/bookings",
        data="{}",
        content_type="application/json",
        HTTP_X_REQUEST_ID="abc-12345",
        HTTP_IF_NONE_MATCH='W/"1.0.ab"',
        HTTP_IDEMPOTENCY_KEY="k" * 30,
        HTTP_X_WAITING_ROOM_TOKEN="wr1.é",
        HTTP_AUTHORIZATION="Token x",
    )
    assert header(request, name) == request.headers.get(name)
    assert header(request, name, "none") == request.headers.get(name, "none")


def test_it_does_not_build_request_headers():
    request = RequestFactory().get("/", HTTP_IF_NONE_MATCH="*")
    assert header(request, "If-None-Match") == "*"
    assert "headers" not in request.__dict__  # control below: the property caches itself there
    assert request.headers.get("If-None-Match") == "*"
    assert "headers" in request.__dict__
