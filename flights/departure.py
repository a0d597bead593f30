"""Gate close: every ticket not boarded becomes a no-show, its seat goes to standby, and the
flight's departure counts are recorded for the overbooking forecast (docs/departure.md).

Steps, each its own transaction so a crash or a lock timeout leaves nothing half done:

1. `gate_closed_at` is set (a guarded UPDATE; the first caller's time stands).  From then on
   the flight is no longer bookable (flights.rules), so no new ticket appears behind us.
2. each unboarded ticket is settled (`bookings.seating.settle_no_show`) and, if it was a
   no-show, recorded as a `NoShow` in the same transaction;
3. once no unboarded ticket is left, `gate_settled_at` is set (guarded) and one
   `CabinDeparture` per fare class written with it.

Running it twice, or twice at once (the beat and a staff member), settles each ticket once:
the ticket's conditional UPDATE decides, and a NoShow is written only by its winner.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from bookings.models import BookingStatus, Inventory, Ticket, TicketStatus
from bookings.seating import settle_no_show, standby_queue, unboarded_tickets
from flights.models import (
    CabinDeparture,
    DeniedBoarding,
    DeniedKind,
    Flight,
    FlightStatus,
    NoShow,
)
from flights.rules import gate_close_due_q
from kernel.errors import DomainError, InvalidRequest

log = logging.getLogger(__name__)

# The beat closes only gates of flights that left recently: a database that predates gate
# close (or a beat that was down for days) must not turn old, never-scanned tickets into
# no-shows long after the fact.  Staff can still close any flight's gate by hand.
BEAT_LOOKBACK = timedelta(hours=6)


@dataclass(frozen=True)
class GateCloseResult:
    flight_id: int
    no_shows: int
    standby_seated: int
    # False: some tickets could not be settled this time (a lock timeout); run it again.
    settled: bool


def close_gate(*, flight_id: int, now: datetime | None = None) -> GateCloseResult:
    """Close the flight's gate now (or finish closing it).  Refuses a cancelled flight."""
    now = now or timezone.now()
    with transaction.atomic():
        Flight.objects.filter(pk=flight_id, gate_closed_at__isnull=True).exclude(
            status=FlightStatus.CANCELLED
        ).update(gate_closed_at=now)
        flight = Flight.objects.filter(pk=flight_id).first()
    if flight is None:
        raise InvalidRequest("No such flight.")
    if flight.gate_closed_at is None:
        raise InvalidRequest("A cancelled flight has no gate to close.")
    no_shows = seated = 0
    for ticket_id in unboarded_tickets(sale_id=flight.sale_id).values_list("pk", flat=True):
        try:
            recorded = _settle_ticket(flight=flight, ticket_id=ticket_id, now=now)
        except DomainError as error:  # too busy: left VALID, the next run settles it
            log.warning("gate close of flight %s: ticket %s: %s", flight.pk, ticket_id, error)
            continue
        if recorded is not None:
            no_shows += 1
            seated += recorded.seat_given_to_id is not None
    settled = _record_departure(flight=flight, now=now)
    return GateCloseResult(
        flight_id=flight.pk, no_shows=no_shows, standby_seated=seated, settled=settled
    )


def close_due_gates(*, now: datetime | None = None) -> int:
    """The beat job: close every gate that is due and not yet settled; returns how many
    flights it settled."""
    now = now or timezone.now()
    due = (
        Flight.objects.filter(
            gate_close_due_q(now=now),
            status=FlightStatus.SCHEDULED,
            gate_settled_at__isnull=True,
            departure_at__gte=now - BEAT_LOOKBACK,
        )
        .order_by("departure_at", "id")
        .values_list("pk", flat=True)
    )
    return sum(close_gate(flight_id=flight_id, now=now).settled for flight_id in list(due))


def _settle_ticket(*, flight: Flight, ticket_id: int, now: datetime) -> NoShow | None:
    with transaction.atomic():
        settlement = settle_no_show(ticket_id=ticket_id, now=now)
        if not settlement.no_show:
            return None
        return NoShow.objects.create(
            flight=flight,
            ticket_id=ticket_id,
            fare_class=settlement.fare_class,
            seat_no=settlement.seat_no,
            seat_given_to_id=settlement.seated_ticket_id,
            recorded_at=now,
        )


def _record_departure(*, flight: Flight, now: datetime) -> bool:
    """Mark the gate settled and write the counts, once, when no unboarded ticket is left."""
    with transaction.atomic():
        if unboarded_tickets(sale_id=flight.sale_id).exists():
            return False
        won = Flight.objects.filter(pk=flight.pk, gate_settled_at__isnull=True).update(
            gate_settled_at=now
        )
        if not won:
            return True
        boarded = dict(
            Ticket.objects.filter(
                sale_id=flight.sale_id,
                status=TicketStatus.USED,
                booking__status=BookingStatus.CONFIRMED,
            )
            .values_list("fare_class")
            .annotate(n=Count("id"))
        )
        no_shows = {
            row["fare_class"]: row
            for row in NoShow.objects.filter(flight=flight)
            .values("fare_class")
            .annotate(n=Count("id"), seated=Count("id", filter=Q(seat_given_to__isnull=False)))
        }
        taken_off = {
            (row["booking__fare_class"], row["kind"]): row["n"]
            for row in DeniedBoarding.objects.filter(flight=flight)
            .values("booking__fare_class", "kind")
            .annotate(n=Count("id"))
        }
        for inventory in Inventory.objects.filter(sale_id=flight.sale_id).order_by("fare_class"):
            code = inventory.fare_class
            CabinDeparture.objects.create(
                flight=flight,
                fare_class=code,
                capacity=inventory.capacity,
                overbook_limit=inventory.overbook_limit,
                sold=inventory.sold,
                boarded=boarded.get(code, 0),
                no_shows=no_shows.get(code, {}).get("n", 0),
                standby_seated=no_shows.get(code, {}).get("seated", 0),
                unseated=standby_queue(sale_id=flight.sale_id, fare_classes=[code]).count(),
                volunteers=taken_off.get((code, DeniedKind.VOLUNTEER), 0),
                denied=taken_off.get((code, DeniedKind.DENIED), 0),
                recorded_at=now,
            )
    return True
