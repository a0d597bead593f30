"""A domain error's problem rendered at once (config.api.exceptions.RenderedProblem, issue 26)
is what DRF's Response gave: the same status, headers and bytes, whatever the client accepts."""

from __future__ import annotations

import pytest
from django.http import HttpResponse

from bookings.customer_holds import hold_seats
from config.api import exceptions
from tests.api.conftest import client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ACCEPTS = [None, "application/json", "*/*", "application/json; indent=4", "text/html, */*;q=0.1"]
COMPARED_HEADERS = ("Content-Type", "Vary", "Allow", "Content-Language", "Retry-After")


def taken_seat(api, flight, accept: str | None, language: str = "de"):
    headers = {"HTTP_ACCEPT_LANGUAGE": language}
    if accept is not None:
        headers["HTTP_ACCEPT"] = accept
    body = {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["12A"]}
    return api.post("/api/bookings", body, format="json", **headers)


def answer(response):
    return (
        response.status_code,
        {name: response.headers.get(name) for name in COMPARED_HEADERS},
        response.content,
    )


@pytest.fixture
def seat_taken(flight):
    hold_seats(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    return flight


def drfs_answer(monkeypatch, api, flight, accept):
    with monkeypatch.context() as patched:
        patched.setattr(exceptions, "_renders_at_once", lambda context: False)
        return answer(taken_seat(api, flight, accept))


@pytest.mark.parametrize("accept", ACCEPTS)
def test_a_domain_problem_is_the_answer_drf_gave(monkeypatch, api, seat_taken, accept):
    ours = taken_seat(api, seat_taken, accept)
    assert isinstance(ours, exceptions.RenderedProblem)
    assert ours.status_code == 409 and ours.data["type"].endswith("/seat-unavailable")
    assert answer(ours) == drfs_answer(monkeypatch, api, seat_taken, accept)


def test_a_problem_named_field_is_camel_cased_as_before(monkeypatch, customer, flight):
    api = client_for(customer)
    body = {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["99Z"]}
    ours = api.post("/api/bookings", body, format="json")
    with monkeypatch.context() as patched:
        patched.setattr(exceptions, "_renders_at_once", lambda context: False)
        drfs = api.post("/api/bookings", body, format="json")
    assert ours.status_code == drfs.status_code >= 400
    assert answer(ours) == answer(drfs)


def test_control_rendering_without_the_negotiated_media_type_differs(monkeypatch, api, seat_taken):
    """The comparison can fail: a renderer not told the accepted media type would lose the
    client's `indent`."""
    drfs = drfs_answer(monkeypatch, api, seat_taken, "application/json; indent=4")

    class Unindented(exceptions.RenderedProblem):
        def __init__(self, body, *, status, context):
            request = context["request"]
            content = request.accepted_renderer.render(body, None, {})
            HttpResponse.__init__(
                self, content, status=status, content_type=exceptions.PROBLEM_CONTENT_TYPE
            )

    monkeypatch.setattr(exceptions, "RenderedProblem", Unindented)
    assert answer(taken_seat(api, seat_taken, "application/json; indent=4")) != drfs
