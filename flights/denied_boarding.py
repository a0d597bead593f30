"""Denied boarding (EU 261, Art. 4): at the check-in cut-off the flight is oversold by
checked-in passengers minus seats; staff ask for volunteers, then deny boarding in the one
priority below.  Each passenger who does not fly gets a DeniedBoarding row (who decided, the
care offered), a refund or a rerouting (flights.rebooking; a rerouting is booked on the later
flight's sale after the denial commits, flights.rerouting), and a compensation ledger entry
(flights.compensation).  Every step is an outbox event with its decider (the audit trail),
and the customer's e-mail.

All of a flight's denial steps take the flight row lock first: two staff denying at once, or
a volunteer accepting while staff deny, are serialised, and the count they decide on is the
one after the other's commit.  docs/departure.md states the invariants.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone, translation
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from bookings.models import Booking, BookingStatus, Passenger, SeatStatus, Ticket, TicketStatus
from bookings.seat_changes import release_seat, seat_party
from flights import compensation, outbox_payloads
from flights.eu261 import Remedy
from flights.models import (
    DeniedBoarding,
    DeniedKind,
    Flight,
    OfferStatus,
    OnlineCheckIn,
    PayoutMethod,
    VolunteerOffer,
)
from flights.rebooking import plan_rerouting, refund_fare_share
from flights.rules import exit_rows_to_avoid, online_checkin_window
from kernel.errors import DomainError, InvalidRequest
from kernel.outbox import emit_event
from kernel.outbox_types import OutboxEventType

# The priority, stated once: the confirmation page shows this text, and `denial_order` is it.
DENIAL_PRIORITY = _(
    "Passengers with reduced mobility, their companions and unaccompanied children board "
    "first and are never denied boarding (Art. 11). Among the other checked-in passengers, "
    "the one who checked in online last is denied first."
)


class OfferNotFound(DomainError):
    status = 404
    code = "volunteer-offer-not-found"
    title = _("Offer not found")


class NotOversold(DomainError):
    status = 409
    code = "not-oversold"
    title = _("This flight is not oversold")


class DenialChanged(DomainError):
    status = 409
    code = "denial-changed"
    title = _("The passengers to deny changed since you looked")


def _flying(flight: Flight) -> QuerySet[OnlineCheckIn]:
    """Checked-in passengers still due to fly: live, of a CONFIRMED booking, not taken off."""
    return OnlineCheckIn.objects.filter(
        flight=flight,
        passenger__is_live=True,
        passenger__booking__status=BookingStatus.CONFIRMED,
        passenger__denied_boarding__isnull=True,
    )


def seats_of(flight: Flight) -> int:
    from bookings.models import Seat

    return Seat.objects.filter(sale_id=flight.sale_id).exclude(status=SeatStatus.BLOCKED).count()


def oversold_by(flight: Flight) -> int:
    """How many more checked-in passengers than seats are still due to fly (never negative)."""
    return max(0, _flying(flight).count() - seats_of(flight))


def denial_order(flight: Flight) -> list[OnlineCheckIn]:
    """Who is denied first, per DENIAL_PRIORITY; Art. 11 passengers are not in it."""
    return list(
        _flying(flight)
        .filter(reduced_mobility=False, unaccompanied_minor=False)
        .select_related("passenger__booking")
        .order_by("-checked_in_at", "-id")
    )


def _lock_flight(flight_id: int, *, now: datetime) -> Flight:
    flight = (
        Flight.objects.select_for_update(of=("self",))
        .select_related("origin", "destination", "carrier")
        .get(pk=flight_id)
    )
    if flight.gate_closed_at is not None or now < online_checkin_window(flight)[1]:
        raise InvalidRequest(
            gettext("Denied boarding is decided between the check-in cut-off and gate close.")
        )
    return flight


def ask_for_volunteers(
    *, flight_id: int, staff: AbstractBaseUser, amount: Decimal, now: datetime | None = None
) -> list[VolunteerOffer]:
    """Offer every checked-in passenger who may be denied (Art. 11 ones are not asked)
    `amount` EUR plus rebooking or a refund; e-mailed, and shown on their booking page."""
    now = now or timezone.now()
    with transaction.atomic():
        flight = _lock_flight(flight_id, now=now)
        if not oversold_by(flight):
            raise NotOversold()
        asked = set(
            VolunteerOffer.objects.filter(flight=flight).values_list("passenger_id", flat=True)
        )
        offers = VolunteerOffer.objects.bulk_create(
            [
                VolunteerOffer(
                    flight=flight,
                    passenger=c.passenger,
                    booking=c.passenger.booking,
                    amount=amount,
                    currency=compensation.CURRENCY,
                    offered_by=staff,
                    offered_at=now,
                )
                for c in denial_order(flight)
                if c.passenger_id not in asked
            ]
        )
        for offer in offers:
            _emit(OutboxEventType.VOLUNTEERS_ASKED, offer.booking_id, flight, staff, offer=offer)
    return offers


def answer_offer(
    *,
    customer: AbstractBaseUser,
    offer_id: int,
    accept: bool,
    remedy: Remedy = Remedy.REROUTING,
    method: PayoutMethod = PayoutMethod.CASH,
    voucher_agreed: bool = False,
    booking_id: int | None = None,
    now: datetime | None = None,
) -> VolunteerOffer:
    """The passenger accepts or declines on their booking page.  An acceptance counts only
    while the flight is still oversold (else the offer is withdrawn: enough volunteers).
    `booking_id`: the booking the page or URL names; the offer must be on it (404 if not,
    as for an offer that is not the customer's)."""
    now = now or timezone.now()
    offers = VolunteerOffer.objects.filter(pk=offer_id, booking__customer=customer)
    if booking_id is not None:
        offers = offers.filter(booking_id=booking_id)
    offer = offers.first()
    if offer is None:
        raise OfferNotFound(gettext("No such offer on your bookings."))
    with transaction.atomic():
        flight = _lock_flight(offer.flight_id, now=now)
        if accept and not oversold_by(flight):
            status = OfferStatus.WITHDRAWN
        else:
            status = OfferStatus.ACCEPTED if accept else OfferStatus.DECLINED
        won = VolunteerOffer.objects.filter(pk=offer.pk, status=OfferStatus.OFFERED).update(
            status=status, answered_at=now
        )
        if not won:
            raise InvalidRequest(gettext("This offer was already answered or withdrawn."))
        offer.status = status
        _emit(OutboxEventType.VOLUNTEER_ANSWERED, offer.booking_id, flight, customer, offer=offer)
        if status == OfferStatus.ACCEPTED:
            take_off(
                flight=flight,
                passenger=Passenger.objects.select_related("booking").get(pk=offer.passenger_id),
                kind=DeniedKind.VOLUNTEER,
                decided_by=customer,
                remedy=remedy,
                method=method,
                voucher_agreed=voucher_agreed,
                volunteer_amount=offer.amount,
                now=now,
            )
        if not oversold_by(flight):  # enough: the other open offers end
            VolunteerOffer.objects.filter(flight=flight, status=OfferStatus.OFFERED).update(
                status=OfferStatus.WITHDRAWN, answered_at=now
            )
    return offer


def deny_boarding(
    *,
    flight_id: int,
    staff: AbstractBaseUser,
    expected_passenger_ids: list[int],
    remedies: dict[int, Remedy] | None = None,
    care: list[str] = (),
    now: datetime | None = None,
) -> list[DeniedBoarding]:
    """Deny boarding to as many as the flight is still oversold by, in DENIAL_PRIORITY.  The
    staff member confirms the passengers shown (`expected_passenger_ids`): if the count or the
    order changed meanwhile (a volunteer, another staff member), nothing is denied."""
    now = now or timezone.now()
    remedies = remedies or {}
    with transaction.atomic():
        flight = _lock_flight(flight_id, now=now)
        chosen = [c.passenger for c in denial_order(flight)[: oversold_by(flight)]]
        if [p.pk for p in chosen] != list(expected_passenger_ids):
            raise DenialChanged()
        if not chosen:
            raise NotOversold()
        VolunteerOffer.objects.filter(flight=flight, status=OfferStatus.OFFERED).update(
            status=OfferStatus.WITHDRAWN, answered_at=now
        )
        return [
            take_off(
                flight=flight,
                passenger=p,
                kind=DeniedKind.DENIED,
                decided_by=staff,
                remedy=remedies.get(p.pk, Remedy.REROUTING),
                care=list(care),
                now=now,
            )
            for p in chosen
        ]


def take_off(
    *,
    flight: Flight,
    passenger: Passenger,
    kind: DeniedKind,
    decided_by: AbstractBaseUser,
    remedy: Remedy,
    method: PayoutMethod = PayoutMethod.CASH,
    voucher_agreed: bool = False,
    volunteer_amount: Decimal | None = None,
    care: list[str] = (),
    now: datetime,
) -> DeniedBoarding:
    """One passenger does not fly (the caller holds the flight lock): their ticket revoked,
    rerouting or refund, the record, the compensation entry and the event."""
    revoked = Ticket.objects.filter(passenger=passenger, status=TicketStatus.VALID).update(
        status=TicketStatus.REVOKED, revoked_at=now
    )
    if not revoked:
        raise InvalidRequest(gettext("That passenger has boarded or holds no valid ticket."))
    booking = passenger.booking
    _pass_seat_on(flight, passenger)
    planned_delay = None
    if remedy == Remedy.REROUTING:
        # Only planned here (a read): the booking is the later flight's sale's write, made
        # after this commits (flights.rerouting), so this transaction stays on one sale.
        planned = plan_rerouting(flight=flight, fare_class=booking.fare_class, now=now)
        planned_delay = planned.arrival_at - flight.arrival_at
    else:
        refund_fare_share(booking=booking, decided_by=decided_by, now=now)
    denied = DeniedBoarding.objects.create(
        flight=flight,
        passenger=passenger,
        booking=booking,
        kind=kind,
        remedy=remedy,
        decided_by=decided_by,
        decided_at=now,
        rerouted_arrival_delay=planned_delay,
        care_offered=list(care),
        reason=_reason(kind, flight),
    )
    _close_if_nobody_flies(booking, now=now)
    entry = compensation.record(
        denied=denied,
        flight=flight,
        method=method,
        voucher_agreed_at=now if voucher_agreed else None,
        volunteer_amount=volunteer_amount,
    )
    _emit(
        OutboxEventType.BOARDING_DENIED, booking.pk, flight, decided_by, denied=denied, entry=entry
    )
    return denied


def _reason(kind: DeniedKind, flight: Flight) -> str:
    with translation.override("en"):  # the audit's language, whoever decided
        return f"{DeniedKind(kind).label} on {flight.code} {flight.departure_at:%Y-%m-%d}"


def _close_if_nobody_flies(booking, *, now: datetime) -> None:
    """The original booking is closed once none of its live passengers flies (issue 28: "closed
    with a reason").  It stays CONFIRMED with `closed_at` set rather than CANCELLED: cancelling
    would hand its units back to the oversold flight, which would sell them again.  The
    reason is each passenger's DeniedBoarding.reason; `Booking.is_closed_unflown` reads it."""
    still_flying = Passenger.objects.filter(
        booking_id=booking.pk, is_live=True, denied_boarding__isnull=True
    ).exists()
    if still_flying:
        return
    Booking.objects.filter(
        pk=booking.pk, status=BookingStatus.CONFIRMED, closed_at__isnull=True
    ).update(closed_at=now, updated_at=now)


def _pass_seat_on(flight: Flight, passenger: Passenger) -> None:
    """The seat of a passenger taken off goes to the first checked-in passenger of the same
    class still without one (check-in time order), so no seat flies empty for nothing."""
    if not release_seat(booking_id=passenger.booking_id, passenger_id=passenger.pk):
        return
    waiting = (
        _flying(flight)
        .filter(
            passenger__seat__isnull=True,
            passenger__booking__fare_class=passenger.booking.fare_class,
        )
        .exclude(passenger=passenger)
        .select_related("passenger")
        .order_by("checked_in_at", "id")
        .first()
    )
    if waiting is not None:
        # The passenger's own confirmation (given at the hold, naming or check-in), by the
        # one rule: an exit-row seat only for whoever confirmed its conditions.
        confirmed = waiting.passenger.seat_conditions_confirmed_at is not None
        seat_party(
            booking_id=waiting.passenger.booking_id,
            passenger_ids=[waiting.passenger_id],
            avoid_rows=exit_rows_to_avoid(flight, confirmed=confirmed),
        )


def _emit(event_type, booking_id: int, flight: Flight, who, *, offer=None, denied=None, entry=None):
    if offer is not None:
        payload = outbox_payloads.volunteer_offer(offer, flight=flight, who=who)
    else:
        payload = outbox_payloads.boarding_denied(
            denied, flight=flight, who=who, entry=entry, currency=compensation.CURRENCY
        )
    emit_event(
        sale_id=flight.sale_id,
        aggregate_type="booking",
        aggregate_id=booking_id,
        event_type=event_type,
        payload=payload,
    )
