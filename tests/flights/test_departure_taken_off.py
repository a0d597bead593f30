"""Issue 28: the departure record per cabin carries the volunteers and the passengers denied
boarding, and the show-up forecast counts them as shows."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from bookings.models import Booking
from flights.denied_boarding import answer_offer, ask_for_volunteers, denial_order, deny_boarding
from flights.departure import close_gate
from flights.models import CabinDeparture, VolunteerOffer
from flights.overbooking import no_show_history
from tests.factories import StaffFactory
from tests.flights.departing import board, small_flight
from tests.flights.oversold import eu_airports, oversold_flight

pytestmark = pytest.mark.django_db


def test_gate_close_records_volunteers_and_denied_and_the_forecast_counts_them_as_shows():
    flight, later, tickets = oversold_flight()
    staff = StaffFactory()
    ask_for_volunteers(flight_id=flight.pk, staff=staff, amount=Decimal("300.00"))
    offer = VolunteerOffer.objects.get(passenger_id=tickets[-1].passenger_id)
    customer = Booking.objects.get(pk=tickets[-1].booking_id).customer
    answer_offer(customer=customer, offer_id=offer.pk, accept=True)
    expected = [c.passenger_id for c in denial_order(flight)[:1]]
    deny_boarding(flight_id=flight.pk, staff=staff, expected_passenger_ids=expected)
    for ticket in tickets[:5]:  # 1F never turns up
        board(ticket, staff=staff, flight=flight)

    close_gate(flight_id=flight.pk)

    record = CabinDeparture.objects.get(flight=flight)
    assert (record.sold, record.boarded, record.no_shows) == (8, 5, 1)
    assert (record.volunteers, record.denied) == (1, 1)
    history = no_show_history(flight=later, fare_class="ECONOMY")
    assert (history.flights, history.volunteers, history.denied) == (1, 1, 1)
    assert history.showed == 7 and history.no_show_rate == pytest.approx(1 / 8)


def test_control_a_record_counting_a_denied_passenger_as_a_no_show_too_is_refused():
    fra, ber = eu_airports()
    flight = small_flight(origin=fra, destination=ber)
    values = dict(flight=flight, fare_class="ECONOMY", capacity=6, overbook_limit=2, sold=8)
    values |= dict(boarded=5, recorded_at=flight.departure_at)
    with pytest.raises(IntegrityError), transaction.atomic():
        CabinDeparture.objects.create(**values, no_shows=7, volunteers=1, denied=1)
    CabinDeparture.objects.create(**values, no_shows=6, volunteers=1, denied=1)  # the bound
