"""Issue 11, abuse limits: one account cannot hold a whole flight (a per-customer cap of live
held units per flight, race-safe), and the seat-picker page is throttled like the API."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from bookings import holding
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import HoldLimitReached
from bookings.lifecycle import cancel_hold
from bookings.models import Booking, BookingStatus
from flights.models import FareInventory
from flights.services import check_inventory
from tests.bookings.confirming import confirm
from tests.concurrency import run_concurrently
from tests.factories import UserFactory


@pytest.fixture(autouse=True)
def cap_of_four(settings):
    settings.SEATKEEPER = {**settings.SEATKEEPER, "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE": 4}


def hold(customer, flight, seats):
    return hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=seats
    )


@pytest.mark.django_db
def test_the_cap_counts_live_held_units_of_one_customer_on_one_flight(
    customer, other_customer, flight
):
    hold(customer, flight, ["10A", "10B", "10C"])
    with pytest.raises(HoldLimitReached) as refused:
        hold(customer, flight, ["11A", "11B"])
    assert refused.value.status == 409
    with pytest.raises(HoldLimitReached):
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2)
    # Nothing of the refused holds was written.
    assert Booking.objects.filter(customer=customer).count() == 1
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").held == 3
    # Up to the cap is fine, and other customers have their own budget.
    hold(customer, flight, ["11A"])
    hold(other_customer, flight, ["12A", "12B", "12C", "12D"])
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.django_db
def test_expired_cancelled_and_paid_holds_do_not_count(customer, flight):
    lapsed = hold(customer, flight, ["10A", "10B", "10C", "10D"])
    Booking.objects.filter(pk=lapsed.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    given_up = hold(customer, flight, ["11A", "11B", "11C", "11D"])
    cancel_hold(customer=customer, booking_id=given_up.pk)
    paid = confirm(hold(customer, flight, ["12A", "12B", "12C", "12D"]))
    assert paid.status == BookingStatus.CONFIRMED
    hold(customer, flight, ["13A", "13B", "13C", "13D"])
    assert Booking.objects.get(pk=given_up.pk).status == BookingStatus.CANCELLED
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.django_db
def test_staff_and_agents_are_exempt_by_permission(customer, staff_user, flight):
    hold(staff_user, flight, ["10A", "10B", "10C", "10D", "10E"])
    customer.user_permissions.add(Permission.objects.get(codename="book_on_behalf"))
    agent = type(customer).objects.get(pk=customer.pk)  # fresh permission cache
    hold(agent, flight, ["11A", "11B", "11C", "11D", "11E"])


def two_cabins_at_once(customer, flight):
    """Three business seats and three economy seats for one customer, at the same moment:
    the two holds lock different inventory rows, so nothing but the cap's own lock stops both
    from counting zero held units and passing."""
    business = [f"{r}{letter}" for r in (1, 2) for letter in "ACDF"]
    economy = [f"{r}{letter}" for r in (10, 11) for letter in "ABCD"]
    return run_concurrently(
        [
            lambda: hold_seats(
                customer=customer,
                sale_id=flight.sale_id,
                fare_class="BUSINESS",
                seat_numbers=business[:3],
            ),
            lambda: hold_seats(
                customer=customer,
                sale_id=flight.sale_id,
                fare_class="ECONOMY",
                seat_numbers=economy[:3],
            ),
        ]
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_parallel_holds_by_one_customer_cannot_both_pass_the_cap(flight, monkeypatch):
    real_lock = holding._lock_customer_on_sale

    def slow_lock(**kwargs):
        time.sleep(0.2)  # the same widened window as the control below
        real_lock(**kwargs)

    monkeypatch.setattr(holding, "_lock_customer_on_sale", slow_lock)
    customer = UserFactory()
    outcomes = two_cabins_at_once(customer, flight)
    assert len(outcomes.results) == 1, outcomes.errors
    assert outcomes.error_kinds == {"HoldLimitReached": 1}
    live = Booking.objects.filter(customer=customer, status=BookingStatus.HELD)
    assert sum(b.seat_count for b in live) == 3
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_control_without_the_lock_the_race_lets_the_cap_be_exceeded(flight, monkeypatch):
    """The same load with the per customer lock taken out: both holds pass (6 > 4 units), so
    the test above is able to fail."""

    def no_lock(**_):
        time.sleep(0.2)  # widen the window between counting and inserting

    monkeypatch.setattr(holding, "_lock_customer_on_sale", no_lock)
    outcomes = two_cabins_at_once(UserFactory(), flight)
    assert len(outcomes.results) == 2, outcomes.errors


# --- the page path ------------------------------------------------------------------------------


@pytest.fixture
def own_throttle_budget(settings):
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"},
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "holds": "3/min",
        },
    }


def post_hold(client, flight, seat):
    return client.post(
        f"/flights/{flight.pk}/hold/",
        {
            "fare_class": "ECONOMY",
            "passengers": 1,
            "seats": [seat],
            "names": ["Ana Lima"],
            "exit_row_confirmed": "on",  # rows 12-13 are exit rows
        },
        follow=True,
    )


@pytest.mark.django_db
def test_the_hold_page_is_throttled_like_the_api(client, customer, flight, own_throttle_budget):
    client.force_login(customer)
    for seat in ["10A", "11A", "12A"]:
        post_hold(client, flight, seat)
    response = post_hold(client, flight, "13A")
    assert any("Too many holds" in str(m) for m in response.context["messages"])
    assert Booking.objects.filter(customer=customer).count() == 3  # the fourth was not made


@pytest.mark.django_db
def test_the_page_and_the_api_share_one_budget(client, customer, flight, own_throttle_budget):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(customer)
    for seat in ["10A", "11A", "12A"]:
        response = api.post(
            "/api/bookings",
            {
                "flightId": flight.pk,
                "fareClass": "ECONOMY",
                "seats": [seat],
                "exitRowConfirmed": True,
            },
            format="json",
        )
        assert response.status_code == 201
    client.force_login(customer)
    response = post_hold(client, flight, "13A")
    assert any("Too many holds" in str(m) for m in response.context["messages"])
    assert Booking.objects.filter(customer=customer).count() == 3


@pytest.mark.django_db
def test_the_cap_is_a_message_on_the_page(client, customer, flight, settings):
    client.force_login(customer)
    hold(customer, flight, ["10A", "10B", "10C", "10D"])
    response = post_hold(client, flight, "13A")
    assert any("at most 4 seats" in str(m) for m in response.context["messages"])
    assert Booking.objects.filter(customer=customer).count() == 1
