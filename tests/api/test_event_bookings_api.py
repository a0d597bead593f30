"""Events over the API: the live seat map, and holds through the one booking resource
(`POST /api/bookings` with `eventId`), paid and cancelled through the existing endpoints."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.inventory import set_fare_limits
from bookings.lifecycle import cancel_hold
from bookings.models import Booking, BookingStatus, Inventory, Seat, SeatStatus
from events.services import put_event_on_sale
from tests.api.conftest import GOOD_CARD, client_for, pay, problem
from tests.events.factories import EventFactory
from waitroom.staff import open_waiting_room

pytestmark = pytest.mark.django_db


@pytest.fixture
def event():
    return EventFactory()


def state(event):
    """What a refused request must leave untouched."""
    return (
        Booking.objects.count(),
        sorted(Inventory.objects.filter(sale=event.sale).values_list("fare_class", "held", "sold")),
        Seat.objects.filter(sale=event.sale).exclude(status=SeatStatus.AVAILABLE).count(),
    )


# --- the seat map ------------------------------------------------------------------------------


def test_seat_map_shows_every_seat_and_standing_area_in_camel_case(anon, event):
    response = anon.get(f"/api/events/{event.pk}/seats")

    assert response.status_code == 200
    data = response.json()
    assert data["eventId"] == event.pk and data["saleOpen"] is True
    assert data["stageSide"] == "TOP"
    seat = next(s for s in data["seats"] if s["seatNo"] == "2-B-5")
    assert seat == {
        "seatNo": "2-B-5",
        "section": "Balcony",
        "row": "B",
        "number": 5,
        "x": seat["x"],
        "y": seat["y"],
        "category": "B",
        "categoryName": "Back stalls and balcony",
        "colour": "#2563eb",
        "price": "45.00",
        "currency": "EUR",
        "accessible": False,
        "restrictedView": True,
        "status": "AVAILABLE",
    }
    assert seat["x"] >= 1 and seat["y"] >= 1
    assert len(data["seats"]) == 34
    assert data["standingAreas"] == [
        {
            "fareClass": "GA-3",
            "section": "Floor",
            "category": "GA",
            "categoryName": "Standing",
            "colour": "#15803d",
            "price": "30.00",
            "currency": "EUR",
            "capacity": 50,
            "available": 50,
        }
    ]
    assert {c["code"]: c["available"] for c in data["categories"]} == {"A": 12, "B": 22, "GA": 50}


def test_seat_map_etag_changes_with_a_hold_and_304_while_nothing_changed(
    anon, customer, event, django_capture_on_commit_callbacks
):
    first = anon.get(f"/api/events/{event.pk}/seats")
    etag = first["ETag"]
    assert anon.get(f"/api/events/{event.pk}/seats", HTTP_IF_NONE_MATCH=etag).status_code == 304

    with django_capture_on_commit_callbacks(execute=True):  # the live version moves on commit
        hold_seats(customer=customer, sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-1"])

    second = anon.get(f"/api/events/{event.pk}/seats", HTTP_IF_NONE_MATCH=etag)
    assert second.status_code == 200 and second["ETag"] != etag
    seat = next(s for s in second.json()["seats"] if s["seatNo"] == "1-1-1")
    assert seat["status"] == "HELD"


def test_seat_map_of_a_draft_or_unknown_event_is_404(anon):
    draft = EventFactory(publish=False)
    for event_id in (draft.pk, 999_999):
        data = problem(anon.get(f"/api/events/{event_id}/seats"), 404)
        assert data["type"].endswith("/event-not-found")


# --- holding -----------------------------------------------------------------------------------


def test_seats_are_held_with_event_id_and_category(api, event):
    response = api.post(
        "/api/bookings",
        {"eventId": event.pk, "category": "A", "seats": ["1-2-1", "1-2-2"]},
        format="json",
    )

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["eventId"] == event.pk
    assert "flightId" not in data and "flightCode" not in data
    assert data["fareClass"] == "A" and data["status"] == "HELD"
    assert data["seats"] == ["1-2-1", "1-2-2"]
    assert Decimal(data["amount"]) == Decimal("160.00")
    assert api.get(f"/api/bookings/{data['bookingId']}").json()["eventId"] == event.pk


def test_standing_places_are_held_by_count_with_the_area_as_fare_class(api, event):
    response = api.post(
        "/api/bookings",
        {"eventId": event.pk, "fareClass": "GA-3", "passengers": 3},
        format="json",
    )

    assert response.status_code == 201, response.content
    assert response.json()["seats"] == [] and response.json()["seatCount"] == 3
    assert Inventory.objects.get(sale=event.sale, fare_class="GA-3").held == 3


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"flightId": 1}, "eventId"),  # both
        ({"eventId": None}, "eventId"),
        ({"category": None}, "category"),
        ({"category": "A", "fareClass": "B"}, "category"),  # two different categories
        ({"seats": ["x" * 17]}, "seats[0]"),
    ],
)
def test_invalid_event_input_is_400_naming_the_field(api, event, payload, field):
    before = state(event)
    body = {"eventId": event.pk, "category": "A", "seats": ["1-1-1"], **payload}
    body = {k: v for k, v in body.items() if not (k == "category" and v is None)}
    data = problem(api.post("/api/bookings", body, format="json"), 400)
    assert field in [p["name"] for p in data["invalidParams"]], data
    assert state(event) == before


def test_neither_flight_nor_event_is_400(api):
    data = problem(api.post("/api/bookings", {"category": "A", "seats": ["1-1-1"]}, "json"), 400)
    assert data["invalidParams"][0]["name"] == "flightId"


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"seats": ["1-9-1"]}, 400, "seat-not-found"),
        ({"seats": ["1-3-1"]}, 400, "seat-wrong-class"),  # row 3 is category B
        ({"category": "Z"}, 400, "class-not-sold"),
        ({"eventId": 999_999}, 404, "event-not-found"),
    ],
)
def test_event_domain_errors_map_to_their_status(api, event, payload, status, code):
    before = state(event)
    body = {"eventId": event.pk, "category": "A", "seats": ["1-1-1"], **payload}
    data = problem(api.post("/api/bookings", body, format="json"), status)
    assert data["type"] == f"https://seatkeeper.dev/problems/{code}"
    assert "flight" not in data["detail"].lower()
    assert state(event) == before


def test_a_draft_event_cannot_be_booked(api):
    draft = EventFactory(publish=False)
    body = {"eventId": draft.pk, "category": "A", "seats": ["1-1-1"]}
    assert problem(api.post("/api/bookings", body, format="json"), 404)["type"].endswith(
        "/event-not-found"
    )


def test_a_protected_event_sale_needs_an_admission_token(api, event):
    open_waiting_room(
        sale_id=event.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=10,
        max_inside=10,
    )
    before = state(event)
    body = {"eventId": event.pk, "category": "A", "seats": ["1-1-1"]}
    data = problem(api.post("/api/bookings", body, format="json"), 403)
    assert data["type"].endswith("/waiting-room-required") and data["queueUrl"]
    assert state(event) == before


def test_put_on_sale_twice_is_refused_and_keeps_the_one_sale():
    event = EventFactory()
    with pytest.raises(Exception):  # noqa: B017 - EventNotEditable
        put_event_on_sale(event_id=event.pk)
    event.refresh_from_db()
    assert Inventory.objects.filter(sale=event.sale).count() == 3


# --- paying and cancelling through the existing endpoints --------------------------------------


@pytest.mark.django_db(transaction=True)
def test_event_booking_is_paid_and_cancelled_with_a_full_refund(sandbox_payments, customer):
    event = EventFactory()
    client = client_for(customer)
    created = client.post(
        "/api/bookings",
        {
            "eventId": event.pk,
            "category": "B",
            "seats": ["2-A-1"],
            "passengerNames": ["Ada Lovelace"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    booking_id = created.json()["bookingId"]

    paid = pay(client, booking_id, amount="45.00", currency="EUR", paymentMethod=GOOD_CARD)
    assert paid.status_code == 201, paid.content
    assert Booking.objects.get(pk=booking_id).status == BookingStatus.CONFIRMED

    quote = client.get(f"/api/bookings/{booking_id}/refund-quote").json()
    assert quote["refundAmount"] == "45.00" and "event" in quote["reason"]
    cancelled = client.delete(f"/api/bookings/{booking_id}")
    assert cancelled.status_code == 200, cancelled.content
    body = cancelled.json()
    assert body["booking"]["status"] == "CANCELLED" and body["booking"]["eventId"] == event.pk
    assert body["refund"]["amount"] == "45.00"
    assert Seat.objects.get(sale=event.sale, seat_no="2-A-1").status == SeatStatus.AVAILABLE


# --- the waitlist of a sold-out category --------------------------------------------------------


def test_the_waitlist_of_a_sold_out_standing_area(api, customer, other_customer, event):
    area = Inventory.objects.get(sale=event.sale, fare_class="GA-3")
    set_fare_limits(inventory_id=area.pk, capacity=2, overbook_limit=0, price=area.price)
    taken = hold_seatless(
        customer=other_customer, sale_id=event.sale_id, fare_class="GA-3", passengers=2
    )
    url = f"/api/events/{event.pk}/waitlist"

    not_yet = problem(api.post(url, {"category": "A", "partySize": 1}, format="json"), 409)
    assert not_yet["type"].endswith("/not-sold-out")
    joined = api.post(url, {"category": "ga-3", "partySize": 1}, format="json")

    assert joined.status_code == 201, joined.content
    entry = joined.json()
    assert (entry["eventId"], entry["fareClass"], entry["status"], entry["position"]) == (
        event.pk,
        "GA-3",
        "WAITING",
        1,
    )
    assert "flightId" not in entry
    assert api.get(url, {"category": "GA-3"}).json()["entryId"] == entry["entryId"]
    left = api.delete(f"{url}?category=GA-3")
    assert left.status_code == 200, left.content
    assert api.get(url, {"category": "GA-3"}).status_code == 404
    again = api.post(url, {"category": "GA-3", "partySize": 1}, format="json")
    assert again.status_code == 201, again.content

    cancel_hold(customer=other_customer, booking_id=taken.pk)  # places come free: offered

    offered = api.get(url, {"category": "GA-3"}).json()
    assert offered["status"] == "OFFERED" and offered["offer"]["status"] == "HELD"
    assert Booking.objects.get(pk=offered["offer"]["bookingId"]).customer == customer


def test_the_waitlist_of_an_unknown_event_is_404(api):
    response = api.post("/api/events/999999/waitlist", {"category": "A", "partySize": 1}, "json")
    assert problem(response, 404)["type"].endswith("/event-not-found")
