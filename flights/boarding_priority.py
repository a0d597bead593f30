"""Staff set a checked-in passenger's EU 261 Art. 11 flags (reduced mobility, unaccompanied
child): such passengers board first and are never denied boarding (`denial_order`).  The
customer declares reduced mobility at online check-in (`flights.online_checkin`); staff
correct or add either flag on the departure panel, with an audit event naming who did it.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext

from flights import outbox_payloads
from flights.models import Flight, OnlineCheckIn
from kernel.errors import InvalidRequest
from kernel.outbox import emit_event
from kernel.outbox_types import OutboxEventType


def set_boarding_priority(
    *,
    flight_id: int,
    passenger_id: int,
    reduced_mobility: bool,
    unaccompanied_minor: bool,
    staff: AbstractBaseUser,
) -> bool:
    """Set both flags of one checked-in passenger; reports whether anything changed."""
    with transaction.atomic():
        # The flight row lock the denial steps take: a denial decides on the flags as they
        # are after this commit, never halfway.
        Flight.objects.select_for_update().filter(pk=flight_id).first()
        record = (
            OnlineCheckIn.objects.select_for_update()
            .select_related("passenger")
            .filter(flight_id=flight_id, passenger_id=passenger_id)
            .first()
        )
        if record is None:
            raise InvalidRequest(
                gettext("That passenger has not checked in on this flight."), field="passenger"
            )
        if (record.reduced_mobility, record.unaccompanied_minor) == (
            reduced_mobility,
            unaccompanied_minor,
        ):
            return False
        OnlineCheckIn.objects.filter(pk=record.pk).update(
            reduced_mobility=reduced_mobility, unaccompanied_minor=unaccompanied_minor
        )
        emit_event(
            sale_id=flight_id,  # a flight's id is its sale id
            aggregate_type="booking",
            aggregate_id=record.passenger.booking_id,
            event_type=OutboxEventType.BOARDING_PRIORITY_SET,
            payload=outbox_payloads.boarding_priority_set(
                booking_id=record.passenger.booking_id,
                flight_id=flight_id,
                passenger_id=passenger_id,
                reduced_mobility=reduced_mobility,
                unaccompanied_minor=unaccompanied_minor,
                who=staff,
            ),
        )
    return True
