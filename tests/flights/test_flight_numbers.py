"""A flight number once per departure, kept by a small global table claimed before the
flight's sale is written (flights 0016, flights.flight_numbers): a second flight of the same
number and departure is refused with nothing written, with the control that without the
claim nothing else refuses it any more; a claim left by a creator that died is taken over
once it is stale, a fresh one is not; the admin's form refuses a taken number and its save
moves the claim on a renumber; and the migration forward and back with live flights."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.admin import site
from django.test import RequestFactory
from django.utils import timezone

from bookings.models import Sale
from flights import flight_numbers, services
from flights.admin import FlightAdmin
from flights.flight_numbers import STALE_AFTER, FlightNumberTaken
from flights.models import Flight, FlightNumber
from tests.bookings.test_sale_migration import latest, migrate
from tests.factories import FlightFactory, UserFactory

pytestmark = pytest.mark.django_db


def same_number(flight: Flight, **extra) -> Flight:
    return FlightFactory(
        code=flight.code, departure_at=flight.departure_at, origin=flight.origin,
        destination=flight.destination, **extra,
    )  # fmt: skip


def test_a_second_flight_of_the_same_number_and_departure_is_refused_and_writes_nothing():
    flight = FlightFactory()
    sales = Sale.objects.count()
    with pytest.raises(FlightNumberTaken):
        same_number(flight)
    assert (Sale.objects.count(), Flight.objects.count()) == (sales, 1)
    # Another departure of the same number is another flight.
    later = FlightFactory(code=flight.code, departure_at=flight.departure_at + timedelta(days=1))
    assert FlightNumber.objects.filter(code=flight.code).count() == 2 and later.pk


def test_control_without_the_claim_nothing_refuses_the_same_number(monkeypatch):
    """The claim is the only guard left (flights_flight has no unique across sales): taken
    away, the same number and departure is scheduled twice."""
    flight = FlightFactory()
    monkeypatch.setattr(services, "flight_number_claimed", _no_claim)
    twin = same_number(flight)
    assert twin.pk != flight.pk and Flight.objects.filter(code=flight.code).count() == 2


class _no_claim:
    def __init__(self, **_number):
        pass

    def __enter__(self):
        return None

    def __exit__(self, *_exc):
        return False


def test_a_failed_flight_gives_its_number_back(monkeypatch):
    flight = FlightFactory()

    def refused(**_sale):
        raise ValueError("the sale could not be written")

    monkeypatch.setattr(services, "open_sale", refused)
    with pytest.raises(ValueError):
        FlightFactory(code="SK1", departure_at=flight.departure_at)
    assert not FlightNumber.objects.filter(code="SK1").exists()
    monkeypatch.undo()
    assert FlightFactory(code="SK1", departure_at=flight.departure_at).pk


def test_a_stale_claim_without_its_flight_is_taken_over_and_a_fresh_one_is_not():
    departure = timezone.now() + timedelta(days=9)
    FlightNumber.objects.create(code="SK7", departure_at=departure, claimed_at=timezone.now())
    with pytest.raises(FlightNumberTaken):  # its flight may be being written right now
        FlightFactory(code="SK7", departure_at=departure)
    FlightNumber.objects.filter(code="SK7").update(
        claimed_at=timezone.now() - STALE_AFTER - timedelta(seconds=1)
    )
    flight = FlightFactory(code="SK7", departure_at=departure)
    assert FlightNumber.objects.filter(code="SK7").count() == 1 and flight.pk
    # A stale claim whose flight exists stays taken.
    FlightNumber.objects.filter(code="SK7").update(claimed_at=timezone.now() - STALE_AFTER * 2)
    with pytest.raises(FlightNumberTaken):
        flight_numbers.claim_flight_number(code="SK7", departure_at=departure)


def test_the_admin_form_refuses_a_taken_number_and_a_renumber_moves_the_claim():
    first, second = FlightFactory(), FlightFactory()
    request = RequestFactory().get("/")
    request.user = UserFactory(is_staff=True, is_superuser=True)
    admin = FlightAdmin(Flight, site)
    form = admin.get_form(request, second)(instance=second)  # the admin's widgets
    form.cleaned_data, form._errors = {"code": first.code, "departure_at": first.departure_at}, {}
    form.clean()
    assert "already departs" in str(form._errors["code"])
    form.cleaned_data, form._errors = {"code": second.code, "departure_at": second.departure_at}, {}
    form.clean()  # its own number is not taken from it
    assert not form._errors
    second.code = "SK999"
    admin.save_model(request, second, form, change=True)
    assert set(FlightNumber.objects.values_list("code", flat=True)) == {first.code, "SK999"}


@pytest.mark.django_db(transaction=True)
def test_the_migration_claims_every_flights_number_forward_and_back():
    flights = [FlightFactory(), FlightFactory()]
    FlightNumber.objects.all().delete()  # as before the migration: no claims
    try:
        back = migrate([("flights", "0015_carry_exit_row_confirmations")])
        assert back.get_model("flights", "Flight").objects.count() == 2
        migrate(latest())
        assert set(FlightNumber.objects.values_list("code", "departure_at")) == {
            (f.code, f.departure_at) for f in flights
        }
        with pytest.raises(FlightNumberTaken):
            same_number(flights[0])
    finally:
        migrate(latest())
