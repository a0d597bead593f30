"""The rerouting of a passenger denied boarding (Art. 8(1)(b)) as steps of its own after the
denial committed, each transaction writing one sale (kernel/sharding.py: a Citus cluster
distributed by sale runs each on one node):

1. the denial (flights.denied_boarding, the first flight's sale): the ticket revoked, the
   DeniedBoarding with its planned rerouting (`rebooked_onto` still empty), the compensation,
   and `boarding.denied` in the outbox;
2. `book_rerouting` (the later flight's sale): the new booking on the next flight of the
   route with a free unit, once per denial: its idempotency record (kernel.idempotency's
   `run_once`, on that sale) makes a retry replay the booking instead of making another;
3. `record_rerouting` (the first sale again): the denial names its new booking, by a
   conditional update (so once), the compensation follows the real arrival delay while
   unpaid, and the customer's e-mail is queued.

The outbox consumer of `boarding.denied` queues the task after its receipt commits
(flights.outbox_handlers); the task retries on failure, and `reroute_pending` runs the same
steps for every denial still waiting (the safety net for a lost task, as refunds have)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from bookings.errors import SeatUnavailable, SoldOut
from bookings.models import Booking, NotificationKind
from bookings.notifications import queue_notification
from flights import compensation, outbox_payloads
from flights.eu261 import Remedy
from flights.models import DeniedBoarding, Flight
from flights.rebooking import NoLaterFlight, book_onto, later_flights
from kernel.errors import IdempotencyKeyInFlight
from kernel.idempotency import run_once
from kernel.models import IdempotencyRecord

SCOPE = "rerouting"


def reroute(*, flight_id: int, denied_id: int, now: datetime | None = None) -> Booking | None:
    """Steps 2 and 3 for one denial (call outside any transaction); safe to run again, also
    concurrently.  The new booking, or None for a refund.  Raises NoLaterFlight (retried)."""
    now = now or timezone.now()
    denied = DeniedBoarding.objects.select_related(
        "flight", "booking__customer", "passenger__booking", "decided_by"
    ).get(flight_id=flight_id, pk=denied_id)
    if denied.remedy != Remedy.REROUTING:
        return None
    if denied.rebooked_onto_id is not None:
        return Booking.objects.get(pk=denied.rebooked_onto_id)
    booking, onto = book_rerouting(denied=denied, now=now)
    record_rerouting(denied=denied, booking=booking, onto=onto)
    return booking


def reroute_pending(*, now: datetime | None = None, grace: timedelta = timedelta(0)) -> int:
    """Every denial decided more than `grace` ago whose rerouting is still to be booked or
    recorded, each in its own steps; how many were rerouted now.  One still without a later
    flight, or being booked by another run right now, waits for the next run.  Beat runs it
    every minute with a minute's grace (the task queued on commit normally came first)."""
    now = now or timezone.now()
    waiting = DeniedBoarding.objects.filter(
        remedy=Remedy.REROUTING, rebooked_onto__isnull=True, decided_at__lte=now - grace
    ).values_list("flight_id", "pk")
    done = 0
    for flight_id, denied_id in list(waiting):
        try:
            done += reroute(flight_id=flight_id, denied_id=denied_id, now=now) is not None
        except (NoLaterFlight, IdempotencyKeyInFlight):
            continue
    return done


def _key(denied: DeniedBoarding) -> str:
    return f"denied-boarding-{denied.pk}"


def book_rerouting(*, denied: DeniedBoarding, now: datetime) -> tuple[Booking, Flight]:
    """Step 2: the new booking, in the later flight's own transaction, once per denial."""
    passenger, customer = denied.passenger, denied.booking.customer
    # Booked already (a retry after step 3 failed): which sale took it is a read across sales.
    done = IdempotencyRecord.objects.filter(customer=customer, scope=SCOPE, key=_key(denied))
    record = done.first()
    if record is not None:
        booking = Booking.objects.get(sale_id=record.sale_id, pk=int(record.resource_id))
        return booking, Flight.objects.get(sale_id=record.sale_id)
    # Every later flight, full ones too: one a concurrent run just filled replays its booking.
    fare_class = passenger.booking.fare_class
    for onto in later_flights(flight=denied.flight, fare_class=fare_class, now=now, free=False):
        booking_id = _book_once(denied=denied, onto=onto, now=now)
        if booking_id is not None:
            return Booking.objects.get(sale_id=onto.sale_id, pk=booking_id), onto
    raise NoLaterFlight()


def _book_once(*, denied: DeniedBoarding, onto: Flight, now: datetime) -> int | None:
    """The denial's booking on `onto` (made now, or made before and replayed), or None when
    `onto` has no unit left.  The free seat read may be taken by another rerouting before the
    hold: read again, a few times."""
    passenger, customer = denied.passenger, denied.booking.customer
    for _attempt in range(3):
        try:
            result = run_once(
                sale_id=onto.sale_id,
                customer=customer,
                scope=SCOPE,
                key=_key(denied),
                request_fingerprint=_key(denied),
                write=lambda: book_onto(
                    candidate=onto, passenger=passenger, customer=customer, now=now
                ),
                answer=lambda booking: (201, {"bookingId": booking.pk}),
            )
        except SoldOut:
            return None
        except SeatUnavailable:
            continue
        return result.body["bookingId"]
    return None


def record_rerouting(*, denied: DeniedBoarding, booking: Booking, onto: Flight) -> bool:
    """Step 3: the denial names its new booking, once (False: recorded already)."""
    delay = onto.arrival_at - denied.flight.arrival_at
    with transaction.atomic():
        won = DeniedBoarding.objects.filter(
            flight_id=denied.flight_id, pk=denied.pk, rebooked_onto__isnull=True
        ).update(rebooked_onto=booking, rerouted_arrival_delay=delay)
        if not won:
            return False
        planned, denied.rebooked_onto, denied.rerouted_arrival_delay = (
            denied.rerouted_arrival_delay,
            booking,
            delay,
        )
        entry = compensation.follow_rerouting(denied=denied, planned_delay=planned)
        payload = outbox_payloads.boarding_denied(
            denied,
            flight=denied.flight,
            who=denied.decided_by,
            entry=entry,
            currency=compensation.CURRENCY,
        )
        queue_notification(
            booking=denied.booking,
            kind=NotificationKind.BOARDING_DENIED,
            context=outbox_payloads.boarding_denied_email(payload),
        )
    return True
