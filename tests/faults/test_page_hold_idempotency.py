"""The seat picker's Hold button: a double click or a resubmitted form is one booking."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from bookings.models import Booking
from flights.models import FareInventory
from flights.services import check_inventory
from tests.concurrency import run_concurrently

pytestmark = pytest.mark.django_db(transaction=True)


def picker_form(browser: Client, flight) -> dict:
    page = browser.get(f"/flights/{flight.pk}/seats/?fare=ECONOMY&passengers=2")
    assert page.status_code == 200, page.content[:300]
    key = re.search(rb'name="idempotency_key" value="([0-9a-f]{32})"', page.content)
    assert key, "the picker form carries a fresh Idempotency-Key"
    return {
        "idempotency_key": key.group(1).decode(),
        "fare_class": "ECONOMY",
        "passengers": "2",
        "seats": ["12A", "12B"],
        "names": ["Ada Lovelace", "Alan Turing"],
        "exit_row_confirmed": "on",  # row 12 is an exit row
    }


def test_each_drawing_of_the_picker_has_its_own_key(customer, flight):
    browser = Client()
    browser.force_login(customer)
    assert (
        picker_form(browser, flight)["idempotency_key"]
        != picker_form(browser, flight)["idempotency_key"]
    )


def test_two_parallel_submissions_of_one_form_make_one_booking(customer, flight):
    browser = Client()
    browser.force_login(customer)
    form = picker_form(browser, flight)
    cookies = browser.cookies

    def submit():
        twin = Client()
        twin.cookies = cookies
        return twin.post(f"/flights/{flight.pk}/hold/", form)

    outcomes = run_concurrently([submit, submit, submit])

    assert outcomes.errors == []
    assert Booking.objects.count() == 1
    booking = Booking.objects.get()
    # Every submission lands on the same booking page (the later ones waited for the first).
    assert {r.status_code for r in outcomes.results} == {302}
    assert {r["Location"] for r in outcomes.results} == {f"/bookings/{booking.pk}/"}
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").held == 2
    assert check_inventory(sale_id=flight.sale_id) == []


def test_a_resubmitted_form_after_success_shows_the_same_booking(customer, flight):
    browser = Client()
    browser.force_login(customer)
    form = picker_form(browser, flight)
    first = browser.post(f"/flights/{flight.pk}/hold/", form)
    again = browser.post(f"/flights/{flight.pk}/hold/", form)
    assert first["Location"] == again["Location"]
    assert Booking.objects.count() == 1


def test_without_the_key_a_resubmit_is_a_second_attempt(customer, flight):
    """Control: the same submission without the hidden key is refused as a taken seat."""
    browser = Client()
    browser.force_login(customer)
    form = picker_form(browser, flight)
    del form["idempotency_key"]
    browser.post(f"/flights/{flight.pk}/hold/", form)
    again = browser.post(f"/flights/{flight.pk}/hold/", form, follow=True)
    assert b"taken" in again.content.lower() or b"unavailable" in again.content.lower()
    assert Booking.objects.count() == 1
