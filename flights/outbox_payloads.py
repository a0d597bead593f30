"""The payload of every outbox event type the day of departure emits (issue 28): one builder
per type, used by the emitters (flights.denied_boarding, flights.compensation,
flights.boarding_priority) and by the tests alike, like bookings/outbox_payloads.py and
payments/outbox_payloads.py.  Every payload names who decided (`decidedBy`, `decidedByName`):
the audit trail partners' webhooks and the e-mails read.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from flights.models import Compensation, DeniedBoarding, Flight, VolunteerOffer
from kernel.outbox_types import OutboxEventType


def _decided(booking_id: int, flight: Flight, who: AbstractBaseUser) -> dict[str, Any]:
    return {
        "bookingId": booking_id,
        "flightId": flight.pk,
        "flightCode": flight.code,
        "decidedBy": who.pk,
        "decidedByName": who.get_username(),
    }


def volunteer_offer(
    offer: VolunteerOffer, *, flight: Flight, who: AbstractBaseUser
) -> dict[str, Any]:
    """`boarding.volunteer_offered` (staff asked) and `boarding.volunteer_answered` (the
    customer answered): the offer and its state."""
    return _decided(offer.booking_id, flight, who) | {
        "offerId": offer.pk,
        "passengerId": offer.passenger_id,
        "status": str(offer.status),
        "amount": str(offer.amount),
        "currency": offer.currency,
    }


def boarding_denied(
    denied: DeniedBoarding,
    *,
    flight: Flight,
    who: AbstractBaseUser,
    entry: Compensation | None,
    currency: str,
) -> dict[str, Any]:
    """`boarding.denied`: the passenger taken off, the remedy, the new booking (None while a
    rerouting is still to be booked: flights.rerouting), the care and the compensation owed
    (0.00 and no method when nothing is)."""
    return _decided(denied.booking_id, flight, who) | {
        "deniedBoardingId": denied.pk,
        "passengerId": denied.passenger_id,
        "kind": str(denied.kind),
        "remedy": str(denied.remedy),
        "rebookedBookingId": denied.rebooked_onto_id,
        "care": list(denied.care_offered),
        "compensation": str(entry.amount) if entry else "0.00",
        "currency": entry.currency if entry else currency,
        "payoutMethod": str(entry.method) if entry else "",
    }


def boarding_denied_email(payload: dict[str, Any]) -> dict[str, Any]:
    """The `boarding.denied` e-mail's context, from the event's payload (or one built alike
    once a rerouting is booked: flights.rerouting)."""
    return {
        "kind": payload["kind"],
        "remedy": payload["remedy"],
        "rebooked_booking_id": payload["rebookedBookingId"],
        "compensation": payload["compensation"],
        "currency": payload["currency"],
        "payout_method": payload["payoutMethod"],
    }


def compensation_paid(entry: Compensation, *, who: AbstractBaseUser) -> dict[str, Any]:
    """`compensation.paid`: the ledger entry paid out, once."""
    return {
        "bookingId": entry.denied_boarding.booking_id,
        "compensationId": entry.pk,
        "amount": str(entry.amount),
        "currency": entry.currency,
        "method": str(entry.method),
        "decidedBy": who.pk,
        "decidedByName": who.get_username(),
    }


def boarding_priority_set(
    *,
    booking_id: int,
    flight_id: int,
    passenger_id: int,
    reduced_mobility: bool,
    unaccompanied_minor: bool,
    who: AbstractBaseUser,
) -> dict[str, Any]:
    """`boarding.priority_set`: staff set a passenger's Art. 11 flags (audit only)."""
    return {
        "bookingId": booking_id,
        "flightId": flight_id,
        "passengerId": passenger_id,
        "reducedMobility": reduced_mobility,
        "unaccompaniedMinor": unaccompanied_minor,
        "decidedBy": who.pk,
        "decidedByName": who.get_username(),
    }


BUILDERS = {
    OutboxEventType.VOLUNTEERS_ASKED: volunteer_offer,
    OutboxEventType.VOLUNTEER_ANSWERED: volunteer_offer,
    OutboxEventType.BOARDING_DENIED: boarding_denied,
    OutboxEventType.COMPENSATION_PAID: compensation_paid,
    OutboxEventType.BOARDING_PRIORITY_SET: boarding_priority_set,
}
