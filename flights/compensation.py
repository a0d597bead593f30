"""The compensation ledger (not refunds: compensation is not the fare and may exceed it).
`record` writes the entry owed to a passenger who did not fly; `pay_out` marks it paid, once.
The amount is EU 261's (flights.eu261) for a flight in scope, a volunteer's the one they
accepted (at least the regulation's, Art. 4(1) leaves it to agreement); cash unless the
passenger signed for a voucher (Art. 7(3), a CHECK on the table)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from flights import outbox_payloads
from flights.eu261 import CURRENCY, Remedy, assess_flight
from flights.models import Compensation, DeniedBoarding, Flight, PayoutMethod, PayoutStatus
from kernel.errors import InvalidRequest
from kernel.outbox import emit_event
from kernel.outbox_types import OutboxEventType

__all__ = ["CURRENCY", "pay_out", "record"]


def record(
    *,
    denied: DeniedBoarding,
    flight: Flight,
    method: PayoutMethod,
    voucher_agreed_at: datetime | None,
    volunteer_amount: Decimal | None = None,
) -> Compensation | None:
    """The entry owed, or None when nothing is (outside EU 261, no volunteer amount)."""
    owed, rule, reduced = _owed(denied, flight, volunteer_amount)
    if not owed:
        return None
    if method == PayoutMethod.VOUCHER and voucher_agreed_at is None:
        raise InvalidRequest(gettext("A voucher needs the passenger's signed agreement."))
    return Compensation.objects.create(
        flight_id=denied.flight_id,  # the flight's id is its sale id
        denied_boarding=denied,
        amount=owed,
        currency=CURRENCY,
        rule=rule,
        reduced=reduced,
        method=method,
        voucher_agreement_signed_at=voucher_agreed_at,
    )


def _owed(
    denied: DeniedBoarding, flight: Flight, volunteer_amount: Decimal | None
) -> tuple[Decimal, str, bool]:
    """(amount, rule, reduced) for the denial as it stands (its remedy, its rerouting's delay)."""
    assessment = assess_flight(flight)
    owed = assessment.amount(
        remedy=Remedy(denied.remedy), rerouted_arrival_delay=denied.rerouted_arrival_delay
    )
    rule = assessment.band.article if assessment.in_scope and assessment.band else ""
    reduced = bool(assessment.band and owed and owed < assessment.band.amount)
    if rule and reduced:
        rule += ", halved (Art. 7(2))"
    if volunteer_amount is not None and volunteer_amount > owed:
        return volunteer_amount, VOLUNTEER_RULE, False
    return owed, rule, reduced


VOLUNTEER_RULE = "Art. 4(1): the amount the volunteer accepted"


def follow_rerouting(*, denied: DeniedBoarding, planned_delay) -> Compensation | None:
    """The rerouting was booked (flights.rerouting) on another flight than the denial planned:
    an unpaid entry follows its real arrival delay (the Art. 7(2) halving may come or go); a
    volunteer's accepted amount stays.  Returns the entry as it now stands."""
    entry = Compensation.objects.filter(flight_id=denied.flight_id, denied_boarding=denied).first()
    if entry is None or denied.rerouted_arrival_delay == planned_delay:
        return entry
    if entry.status != PayoutStatus.PENDING or entry.rule == VOLUNTEER_RULE:
        return entry
    owed, rule, reduced = _owed(denied, denied.flight, None)
    Compensation.objects.filter(
        flight_id=denied.flight_id, pk=entry.pk, status=PayoutStatus.PENDING
    ).update(amount=owed, rule=rule, reduced=reduced)
    entry.amount, entry.rule, entry.reduced = owed, rule, reduced
    return entry


def pay_out(
    *, compensation_id: int, staff: AbstractBaseUser, reference: str, now: datetime | None = None
) -> bool:
    """PENDING -> PAID, once (a second call, or a concurrent one, reports False)."""
    now = now or timezone.now()
    with transaction.atomic():
        won = Compensation.objects.filter(pk=compensation_id, status=PayoutStatus.PENDING).update(
            status=PayoutStatus.PAID, paid_at=now, paid_by=staff, payout_reference=reference
        )
        if won:
            entry = Compensation.objects.select_related("denied_boarding").get(pk=compensation_id)
            emit_event(
                sale_id=entry.flight_id,  # a flight's id is its sale id
                aggregate_type="booking",
                aggregate_id=entry.denied_boarding.booking_id,
                event_type=OutboxEventType.COMPENSATION_PAID,
                payload=outbox_payloads.compensation_paid(entry, who=staff),
            )
    return bool(won)
