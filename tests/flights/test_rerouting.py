"""A denial's rerouting as its own steps after the denial committed (flights.rerouting): run
again it books nothing twice, also when the step that records it failed after the booking
committed; and a rerouting that lands on a later flight than the denial planned brings the
unpaid compensation in line with its real delay.  flights 0017 back refuses a rerouting still
being booked (the old CHECK would), and passes once none is."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from bookings.models import Booking
from flights import rerouting
from flights.denied_boarding import denial_order, deny_boarding
from flights.models import Compensation, DeniedBoarding, Flight, FlightStatus
from tests.factories import UserFactory
from tests.flights.departing import small_flight
from tests.flights.oversold import oversold_flight

pytestmark = pytest.mark.django_db


def deny_two(flight) -> list[DeniedBoarding]:
    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    return deny_boarding(
        flight_id=flight.pk, staff=UserFactory(is_staff=True), expected_passenger_ids=expected
    )


def test_a_failed_record_is_retried_without_a_second_booking(monkeypatch):
    flight, later, _tickets = oversold_flight()
    denied, _other = deny_two(flight)
    record = rerouting.record_rerouting

    def dies(**_step):
        raise RuntimeError("the worker died after the booking committed")

    monkeypatch.setattr(rerouting, "record_rerouting", dies)
    with pytest.raises(RuntimeError):
        rerouting.reroute(flight_id=flight.pk, denied_id=denied.pk)
    booked = set(Booking.objects.filter(sale_id=later.sale_id).values_list("pk", flat=True))
    assert len(booked) == 1 and DeniedBoarding.objects.get(pk=denied.pk).rebooked_onto is None

    monkeypatch.setattr(rerouting, "record_rerouting", record)
    again = rerouting.reroute(flight_id=flight.pk, denied_id=denied.pk)
    assert {again.pk} == booked  # the booking replayed from its idempotency record
    assert rerouting.reroute(flight_id=flight.pk, denied_id=denied.pk).pk == again.pk
    assert DeniedBoarding.objects.get(pk=denied.pk).rebooked_onto_id == again.pk
    assert Booking.objects.filter(sale_id=later.sale_id).count() == 1


def test_a_rerouting_later_than_planned_follows_its_real_delay():
    # Planned within 2 h of the planned arrival (FRA-BER: halved, EUR 125) ...
    flight, later, _tickets = oversold_flight(later_in=timedelta(hours=1))
    denied, _other = deny_two(flight)
    assert Compensation.objects.get(denied_boarding=denied).amount == Decimal("125.00")
    # ... but that flight is cancelled before the rerouting is booked: the next one, 5 h on.
    Flight.objects.filter(pk=later.pk).update(status=FlightStatus.CANCELLED)
    last = small_flight(
        rows=2, origin=flight.origin, destination=flight.destination,
        departure_at=flight.departure_at + timedelta(hours=5),
    )  # fmt: skip
    booking = rerouting.reroute(flight_id=flight.pk, denied_id=denied.pk)
    assert booking.sale_id == last.sale_id
    entry = Compensation.objects.get(denied_boarding=denied)
    assert (entry.amount, entry.reduced) == (Decimal("250.00"), False)
    assert DeniedBoarding.objects.get(pk=denied.pk).rerouted_arrival_delay == timedelta(hours=5)


@pytest.mark.django_db(transaction=True)
def test_flights_0017_back_stops_on_a_rerouting_still_being_booked_and_passes_after():
    from tests.bookings.test_sale_migration import latest, migrate

    flight, later, _tickets = oversold_flight()
    booked, pending = deny_two(flight)
    rerouting.reroute(flight_id=flight.pk, denied_id=booked.pk)
    before = [("flights", "0016_flight_numbers")]
    try:
        with pytest.raises(RuntimeError, match="still being booked"):
            migrate(before)
        migrate(latest())
        assert rerouting.reroute_pending() == 1
        back = migrate(before)  # the old CHECK and key hold for every row now
        OldDenied = back.get_model("flights", "DeniedBoarding")
        assert set(OldDenied.objects.values_list("rebooked_onto__sale_id", flat=True)) == {
            later.sale_id
        }
    finally:
        migrate(latest())
    assert DeniedBoarding.objects.filter(pk=pending.pk, rebooked_onto__isnull=False).exists()


def test_the_beat_sweep_books_a_rerouting_whose_task_was_lost_after_its_grace():
    """No task ran (the broker lost it): the sweep leaves a fresh denial to its task, and
    books one a minute old."""
    from flights.tasks import reroute_pending

    flight, later, _tickets = oversold_flight()
    denied, other = deny_two(flight)
    assert reroute_pending() == 0  # within the grace: the queued task comes first
    DeniedBoarding.objects.filter(pk=denied.pk).update(
        decided_at=denied.decided_at - timedelta(minutes=2)
    )
    assert reroute_pending() == 1
    assert DeniedBoarding.objects.get(pk=denied.pk).rebooked_onto.sale_id == later.sale_id
    assert DeniedBoarding.objects.get(pk=other.pk).rebooked_onto is None
