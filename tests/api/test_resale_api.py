"""Resale over the API and the booking page (issue 29, item 4): bad input is a problem+json 4xx
(a message on the page) and changes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from bookings import resale_selectors
from bookings.models import Booking, BookingStatus, Resale, ResaleStatus, Ticket
from events.models import Event
from payments.cancellation import cancel_booking
from payments.outcomes import confirm_payment
from tests.api.conftest import client_for, problem, sandbox_payments  # noqa: F401
from tests.factories import UserFactory
from tests.payments.resale_setup import (
    name,
    payment_in_flight,
    sold_out_event_with_paid_booking,
    wait,
)

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEMS = "https://seatkeeper.dev/problems/"


@pytest.fixture
def resellable(sandbox_payments):  # noqa: F811
    return sold_out_event_with_paid_booking()


def url(booking) -> str:
    return f"/api/bookings/{booking.pk}/resale"


def test_list_read_and_withdraw(resellable):
    api = client_for(resellable.seller)
    wait(resellable.event)

    created = api.post(url(resellable.booking))
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["status"] == "OFFERED" and body["faceValue"] == "160.00"
    assert body["fee"] == "16.00" and body["refundWhenSold"] == "144.00"
    assert api.get(url(resellable.booking)).json()["resaleId"] == body["resaleId"]

    withdrawn = api.delete(url(resellable.booking))
    assert withdrawn.status_code == 200 and withdrawn.json()["status"] == "WITHDRAWN"


def test_not_your_booking_is_404(resellable):
    data = problem(client_for(UserFactory()).post(url(resellable.booking)), 404)
    assert data["type"] == f"{PROBLEMS}booking-not-found"
    assert not Resale.objects.exists()


def test_already_listed_is_409(resellable):
    api = client_for(resellable.seller)
    assert api.post(url(resellable.booking)).status_code == 201
    data = problem(api.post(url(resellable.booking)), 409)
    assert data["type"] == f"{PROBLEMS}resale-already-listed"
    assert Resale.objects.count() == 1


def test_a_cancelled_booking_is_409(resellable):
    cancel_booking(customer=resellable.seller, booking_id=resellable.booking.pk)
    data = problem(client_for(resellable.seller).post(url(resellable.booking)), 409)
    assert data["type"] == f"{PROBLEMS}not-for-resale"
    assert not Resale.objects.exists()


def test_after_the_start_is_409(resellable):
    Event.objects.filter(pk=resellable.event.pk).update(
        starts_at=timezone.now() - timedelta(minutes=1)
    )
    data = problem(client_for(resellable.seller).post(url(resellable.booking)), 409)
    assert data["type"] == f"{PROBLEMS}sale-not-bookable"
    assert not Resale.objects.exists()


def test_a_listed_booking_cannot_be_cancelled_and_withdrawing_twice_is_409(resellable):
    api = client_for(resellable.seller)
    assert api.post(url(resellable.booking)).status_code == 201
    data = problem(api.delete(f"/api/bookings/{resellable.booking.pk}"), 409)
    assert data["type"] == f"{PROBLEMS}resale-already-listed"
    assert Booking.objects.get(pk=resellable.booking.pk).status == BookingStatus.CONFIRMED
    assert api.delete(url(resellable.booking)).status_code == 200
    data = problem(api.delete(url(resellable.booking)), 409)
    assert data["type"] == f"{PROBLEMS}not-for-resale"


def test_never_listed_is_404(resellable):
    problem(client_for(resellable.seller).get(url(resellable.booking)), 404)


def test_the_booking_page_lists_and_withdraws(resellable):
    client = Client()
    client.force_login(resellable.seller)
    page = client.get(f"/bookings/{resellable.booking.pk}/")
    assert b'id="resale-list"' in page.content

    listed = client.post(f"/bookings/{resellable.booking.pk}/resale/", follow=True)
    assert b'id="resale-withdraw"' in listed.content
    assert Resale.objects.get().status == ResaleStatus.LISTED
    twice = client.post(f"/bookings/{resellable.booking.pk}/resale/", follow=True)
    assert b"already listed" in twice.content
    assert Resale.objects.count() == 1

    client.post(f"/bookings/{resellable.booking.pk}/resale/withdraw/", follow=True)
    assert Resale.objects.get().status == ResaleStatus.WITHDRAWN


# --- partial resale: the seller chooses the tickets ------------------------------------------


def ticket_ids(booking, *seat_nos: str) -> list[int]:
    return list(
        Ticket.objects.filter(booking=booking, seat_no__in=seat_nos).values_list("pk", flat=True)
    )


def test_listing_chosen_tickets_names_them_and_their_seats(resellable):
    api = client_for(resellable.seller)
    wait(resellable.event, party_size=1)
    chosen = ticket_ids(resellable.booking, "1-1-2")

    created = api.post(url(resellable.booking), {"ticketIds": chosen}, format="json")

    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["ticketIds"], body["seats"], body["status"]) == (chosen, ["1-1-2"], "OFFERED")
    assert (body["faceValue"], body["fee"], body["refundWhenSold"]) == ("80.00", "8.00", "72.00")
    assert api.get(url(resellable.booking)).json()["ticketIds"] == chosen


@pytest.mark.parametrize(
    "body, status, kind",
    [
        ({"ticketIds": []}, 400, "invalid-request"),
        ({"ticketIds": ["x"]}, 400, "invalid-request"),
        ([1, 2], 400, "invalid-request"),
        ({"ticketIds": [987654]}, 400, "tickets-not-in-booking"),
    ],
    ids=["empty", "not-a-number", "not-an-object", "unknown-ticket"],
)
def test_a_bad_choice_is_a_400_and_lists_nothing(resellable, body, status, kind):
    data = problem(
        client_for(resellable.seller).post(url(resellable.booking), body, format="json"), status
    )
    assert data["type"] == f"{PROBLEMS}{kind}"
    assert not Resale.objects.exists()


def test_another_bookings_ticket_is_a_400(resellable):
    other = sold_out_event_with_paid_booking()
    data = problem(
        client_for(resellable.seller).post(
            url(resellable.booking),
            {"ticketIds": ticket_ids(other.booking, "1-1-1")},
            format="json",
        ),
        400,
    )
    assert data["type"] == f"{PROBLEMS}tickets-not-in-booking"
    assert not Resale.objects.exists()


def test_the_booking_page_lists_only_the_ticked_tickets(resellable):
    client = Client()
    client.force_login(resellable.seller)
    page = client.get(f"/bookings/{resellable.booking.pk}/")
    assert page.content.count(b'name="tickets"') == 2  # a choice: both tickets, ticked

    nothing = client.post(
        f"/bookings/{resellable.booking.pk}/resale/", {"choose": "1"}, follow=True
    )
    assert b"Choose at least one ticket" in nothing.content
    assert not Resale.objects.exists()

    (chosen,) = ticket_ids(resellable.booking, "1-1-1")
    listed = client.post(
        f"/bookings/{resellable.booking.pk}/resale/",
        {"choose": "1", "tickets": [str(chosen)]},
        follow=True,
    )
    assert b'id="resale-listed"' in listed.content
    resale = Resale.objects.get()
    assert resale_selectors.listed_tickets(resale=resale)[0].pk == chosen
    assert len(resale.passenger_ids) == 1


def test_after_a_partial_sale_the_api_shows_the_seller_only_what_stays_theirs(resellable):
    wait(resellable.event, party_size=1)
    api = client_for(resellable.seller)
    chosen = ticket_ids(resellable.booking, "1-1-2")
    resale_id = api.post(url(resellable.booking), {"ticketIds": chosen}, format="json").json()
    offer = Booking.objects.get(pk=Resale.objects.get(pk=resale_id["resaleId"]).offer_id)
    name(offer)
    confirm_payment(payment_id=payment_in_flight(offer).pk)

    body = api.get(f"/api/bookings/{resellable.booking.pk}").json()
    assert (body["status"], body["seatCount"], body["seats"]) == ("CONFIRMED", 1, ["1-1-1"])
    assert [p["name"] for p in body["passengers"]] == ["Ada Lovelace"]
    assert body["amount"] == "80.00"
