"""The day of departure's outbox events (issue 28) are built by flights.outbox_payloads, one
builder per type: what the emitter wrote is what the builder gives, and it survives the trip
through JSON and the outbox row (tests/bookings/confirming.round_trip)."""

from decimal import Decimal

import pytest

from bookings.models import Booking
from flights import compensation, outbox_payloads
from flights.boarding_priority import set_boarding_priority
from flights.denied_boarding import answer_offer, ask_for_volunteers, denial_order, deny_boarding
from flights.models import Compensation, DeniedBoarding, VolunteerOffer
from flights.rerouting import reroute_pending
from kernel.models import OutboxEvent
from kernel.outbox_types import OutboxEventType
from tests.bookings.confirming import round_trip
from tests.factories import StaffFactory
from tests.flights.oversold import oversold_flight

pytestmark = pytest.mark.django_db

AUDIT = {"bookingId", "decidedBy", "decidedByName"}


def only(event_type: OutboxEventType) -> dict:
    return OutboxEvent.objects.filter(event_type=event_type).order_by("-id").first().payload


def checked(event_type: OutboxEventType, built: dict) -> dict:
    assert only(event_type) == built  # the emitter used the builder
    assert round_trip(event_type, built) == built
    assert set(built) >= AUDIT
    return built


def test_every_departure_event_is_its_builders_payload_and_round_trips():
    flight, _later, tickets = oversold_flight()
    staff = StaffFactory()
    set_boarding_priority(
        flight_id=flight.pk,
        passenger_id=tickets[0].passenger_id,
        reduced_mobility=True,
        unaccompanied_minor=False,
        staff=staff,
    )
    checked(
        OutboxEventType.BOARDING_PRIORITY_SET,
        outbox_payloads.boarding_priority_set(
            booking_id=tickets[0].booking_id,
            flight_id=flight.pk,
            passenger_id=tickets[0].passenger_id,
            reduced_mobility=True,
            unaccompanied_minor=False,
            who=staff,
        ),
    )

    ask_for_volunteers(flight_id=flight.pk, staff=staff, amount=Decimal("300.00"))
    offer = VolunteerOffer.objects.order_by("-id").first()
    asked = checked(
        OutboxEventType.VOLUNTEERS_ASKED,
        outbox_payloads.volunteer_offer(offer, flight=flight, who=staff),
    )
    assert asked["status"] == "OFFERED" and asked["amount"] == "300.00"

    customer = Booking.objects.get(pk=offer.booking_id).customer
    answer_offer(customer=customer, offer_id=offer.pk, accept=False)
    offer.refresh_from_db()
    answered = checked(
        OutboxEventType.VOLUNTEER_ANSWERED,
        outbox_payloads.volunteer_offer(offer, flight=flight, who=customer),
    )
    assert answered["status"] == "DECLINED" and answered["decidedBy"] == customer.pk

    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    deny_boarding(flight_id=flight.pk, staff=staff, expected_passenger_ids=expected)
    denied = DeniedBoarding.objects.order_by("-id").first()
    entry = Compensation.objects.get(denied_boarding=denied)
    built = checked(
        OutboxEventType.BOARDING_DENIED,
        outbox_payloads.boarding_denied(
            denied, flight=flight, who=staff, entry=entry, currency=compensation.CURRENCY
        ),
    )
    assert (built["compensation"], built["kind"], built["payoutMethod"]) == (
        "250.00",
        "DENIED",
        "CASH",
    )
    # At the denial the rerouting is still to be booked (on the later flight's sale, after
    # this commits); its e-mail carries the new booking once booked.
    assert built["rebookedBookingId"] is None
    reroute_pending()
    denied.refresh_from_db()
    after = outbox_payloads.boarding_denied(
        denied, flight=flight, who=staff, entry=entry, currency=compensation.CURRENCY
    )
    assert after["rebookedBookingId"] == denied.rebooked_onto_id is not None

    compensation.pay_out(compensation_id=entry.pk, staff=staff, reference="BANK-1")
    entry.refresh_from_db()
    paid = checked(
        OutboxEventType.COMPENSATION_PAID, outbox_payloads.compensation_paid(entry, who=staff)
    )
    assert paid["compensationId"] == entry.pk


def test_control_a_payload_that_is_not_json_fails_the_round_trip():
    with pytest.raises(TypeError):
        round_trip(OutboxEventType.COMPENSATION_PAID, {"amount": Decimal("1.00")})


def test_nothing_owed_is_zero_and_no_method():
    flight, _later, _tickets = oversold_flight()
    denied = DeniedBoarding(pk=1, passenger_id=2, booking_id=3, kind="DENIED", remedy="REFUND")
    built = outbox_payloads.boarding_denied(
        denied, flight=flight, who=StaffFactory(), entry=None, currency="EUR"
    )
    assert (built["compensation"], built["currency"], built["payoutMethod"]) == ("0.00", "EUR", "")
    assert round_trip(OutboxEventType.BOARDING_DENIED, built) == built
