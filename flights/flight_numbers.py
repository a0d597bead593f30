"""A flight number once per departure, (code, departure_at) across every flight: a catalogue
rule across sales, so it lives in a small global table (`FlightNumber`) claimed in its own
transaction *before* the flight's sale is written, never inside it (kernel/sharding.py; on a
Citus cluster distributed by sale the flight's rows are on its sale's node, where no unique
across sales can be checked; docs/performance.md, "Beyond one primary").

A claim whose flight was never written (its creator died between the two transactions) would
block the number for ever; one older than `STALE_AFTER` with no flight of that number is
taken over, by a conditional update, so of two takers one wins."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from flights.models import Flight, FlightNumber
from kernel.errors import DomainError

STALE_AFTER = timedelta(minutes=5)


class FlightNumberTaken(DomainError):
    status = 409
    code = "flight-number-taken"
    title = _("This flight number already departs at that time")


def claim_flight_number(*, code: str, departure_at: datetime) -> FlightNumber:
    """Take (code, departure_at) for a flight about to be written, in a transaction of its own
    (call outside any); raises FlightNumberTaken if a flight has it or is being written."""
    now = timezone.now()
    try:
        with transaction.atomic():
            return FlightNumber.objects.create(code=code, departure_at=departure_at, claimed_at=now)
    except IntegrityError:
        pass
    claim = FlightNumber.objects.filter(code=code, departure_at=departure_at).first()
    in_use = Flight.objects.filter(code=code, departure_at=departure_at).exists()
    if claim is None or in_use or claim.claimed_at > now - STALE_AFTER:
        raise FlightNumberTaken(
            gettext("Flight %(code)s already departs at that time.") % {"code": code}
        )
    won = FlightNumber.objects.filter(pk=claim.pk, claimed_at=claim.claimed_at).update(
        claimed_at=now
    )
    if not won:
        raise FlightNumberTaken()
    claim.claimed_at = now
    return claim


def flight_number_taken(*, code: str, departure_at: datetime) -> bool:
    """Whether a flight has the number, or a fresh claim does (its flight being written)."""
    fresh = FlightNumber.objects.filter(
        code=code, departure_at=departure_at, claimed_at__gt=timezone.now() - STALE_AFTER
    )
    return fresh.exists() or Flight.objects.filter(code=code, departure_at=departure_at).exists()


def release_flight_number(*, code: str, departure_at: datetime) -> None:
    """The number is free again (its flight was not written, or was renumbered)."""
    FlightNumber.objects.filter(code=code, departure_at=departure_at).delete()


@contextmanager
def flight_number_claimed(*, code: str, departure_at: datetime) -> Iterator[FlightNumber]:
    """Claim the number, run the block (the flight's own transaction), and give the number
    back if the block fails: the flight was not written."""
    claim = claim_flight_number(code=code, departure_at=departure_at)
    try:
        yield claim
    except BaseException:
        FlightNumber.objects.filter(pk=claim.pk, claimed_at=claim.claimed_at).delete()
        raise
