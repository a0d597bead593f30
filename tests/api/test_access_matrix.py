"""Who may see and touch which booking, for every booking endpoint.

Rows are callers, columns are the owner of the booking; every booking, payment, refund and
ticket endpoint is covered.  Customers reach only their own
bookings; anything else is 404, indistinguishable from a booking that does not exist.  Staff
holding `bookings.book_on_behalf` (superusers, travel agents) act for customers; staff without
it are customers like anyone else.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.models import Booking, BookingStatus, Ticket
from bookings.outbox import relay_outbox
from bookings.services import hold_seats
from payments.models import Payment
from tests.api.conftest import GOOD_CARD, client_for, pay, problem
from tests.bookings.confirming import hold_and_confirm
from tests.factories import StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

CALLERS = ["alice", "bob", "superuser", "agent", "plain_staff"]
OWNERS = ["alice", "bob"]
# caller -> owners whose bookings the caller may reach
MAY_REACH = {
    "alice": {"alice"},
    "bob": {"bob"},
    "superuser": {"alice", "bob"},
    "agent": {"alice", "bob"},
    "plain_staff": set(),
}


@pytest.fixture
def people(agent):
    return {
        "alice": UserFactory(username="alice"),
        "bob": UserFactory(username="bob"),
        "superuser": StaffFactory(),
        "agent": agent,
        "plain_staff": UserFactory(username="desk", is_staff=True),
    }


@pytest.fixture
def bookings(people, flight):
    seats = iter(f"{row}{letter}" for row in range(14, 31) for letter in "ABCDEF")
    return {
        owner: hold_seats(
            customer=people[owner],
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=[next(seats)],
        )
        for owner in OWNERS
    }


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("owner", OWNERS)
def test_read_one_booking(people, bookings, caller, owner):
    booking = bookings[owner]
    response = client_for(people[caller]).get(f"/api/bookings/{booking.pk}")
    if owner in MAY_REACH[caller]:
        assert response.status_code == 200
        assert response.json()["bookingId"] == booking.pk
    else:
        missing = client_for(people[caller]).get("/api/bookings/987654321")
        body = problem(response, 404)
        # Not even a hint that the id exists: the same answer as for a made-up id.
        assert body == {
            **problem(missing, 404),
            "detail": problem(missing, 404)["detail"].replace("987654321", str(booking.pk)),
        }


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("owner", OWNERS)
def test_cancel_one_booking(people, bookings, caller, owner):
    booking = bookings[owner]
    response = client_for(people[caller]).delete(f"/api/bookings/{booking.pk}")
    status = Booking.objects.get(pk=booking.pk).status
    if owner in MAY_REACH[caller]:
        assert response.status_code == 200
        assert status == BookingStatus.CANCELLED
    else:
        problem(response, 404)
        assert status == BookingStatus.HELD


@pytest.mark.parametrize("caller", CALLERS)
def test_list_shows_only_the_callers_own(people, bookings, caller):
    data = client_for(people[caller]).get("/api/bookings").json()
    expected = [bookings[caller].pk] if caller in bookings else []
    assert [b["bookingId"] for b in data["results"]] == expected


@pytest.mark.parametrize("caller", CALLERS)
def test_booking_for_someone_else(people, flight, caller):
    response = client_for(people[caller]).post(
        "/api/bookings",
        {
            "flightId": flight.pk,
            "customerId": people["alice"].pk,
            "fareClass": "ECONOMY",
            "seats": ["30F"],
        },
        format="json",
    )
    if caller == "alice" or caller in {"superuser", "agent"}:
        assert response.status_code == 201
        assert Booking.objects.get(pk=response.json()["bookingId"]).customer == people["alice"]
    else:
        problem(response, 403)
        assert not Booking.objects.filter(passengers__seat__seat_no="30F").exists()


# --- confirmed bookings: cancellation with refund decision, refund quotes, tickets -------------


@pytest.fixture
def confirmed(people, flight):
    seats = iter(f"{row}{letter}" for row in range(20, 31) for letter in "ABCDEF")
    made = {
        owner: hold_and_confirm(people[owner], flight, seats=[next(seats)], names=[owner])
        for owner in OWNERS
    }
    relay_outbox(now=timezone.now() + timedelta(hours=1))  # issues the tickets
    return made


def assert_hidden(response, made_up):
    """A 404 that says nothing the same request for a made-up id would not say."""
    body = problem(response, 404)
    assert body == problem(made_up, 404)


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("owner", OWNERS)
def test_refund_quote(people, bookings, caller, owner):
    booking = bookings[owner]
    client = client_for(people[caller])
    response = client.get(f"/api/bookings/{booking.pk}/refund-quote")
    if owner in MAY_REACH[caller]:
        assert response.status_code == 200
        assert response.json()["bookingId"] == booking.pk
    else:
        problem(response, 404)
        assert "bookingId" not in response.json()


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("owner", OWNERS)
def test_cancel_confirmed_booking(people, confirmed, caller, owner):
    booking = confirmed[owner]
    response = client_for(people[caller]).delete(f"/api/bookings/{booking.pk}")
    status = Booking.objects.get(pk=booking.pk).status
    if owner in MAY_REACH[caller]:
        assert response.status_code == 200
        assert status == BookingStatus.CANCELLED
        assert response.json()["refund"] is None  # confirmed here without a payment
    else:
        problem(response, 404)
        assert status == BookingStatus.CONFIRMED


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("owner", OWNERS)
def test_ticket_list(people, confirmed, caller, owner):
    booking = confirmed[owner]
    client = client_for(people[caller])
    response = client.get(f"/api/bookings/{booking.pk}/tickets")
    if owner in MAY_REACH[caller]:
        assert response.status_code == 200
        assert [t["passenger"] for t in response.json()] == [owner]
    else:
        assert_hidden(response, client.get("/api/bookings/987654321/tickets"))


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("owner", OWNERS)
@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("qr.png", "image/png"),
        ("qr.svg", "image/svg+xml"),
        ("boarding-pass.pdf", "application/pdf"),
    ],
)
def test_ticket_files(people, confirmed, caller, owner, path, content_type):
    booking = confirmed[owner]
    ticket = Ticket.objects.get(booking=booking)
    client = client_for(people[caller])
    response = client.get(f"/api/bookings/{booking.pk}/tickets/{ticket.pk}/{path}")
    if owner in MAY_REACH[caller]:
        assert response.status_code == 200 and response["Content-Type"] == content_type
    else:
        assert_hidden(response, client.get(f"/api/bookings/{booking.pk}/tickets/987654321/{path}"))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("owner", OWNERS)
def test_pay(sandbox_payments, people, bookings, caller, owner):
    booking = bookings[owner]
    response = pay(client_for(people[caller]), booking.pk, paymentMethod=GOOD_CARD)
    status = Booking.objects.get(pk=booking.pk).status
    if owner in MAY_REACH[caller]:
        assert response.status_code == 201, response.content
        assert status == BookingStatus.CONFIRMED
        assert Payment.objects.get().customer == people[caller]
    else:
        problem(response, 404)
        assert status == BookingStatus.HELD
        assert not Payment.objects.exists()
