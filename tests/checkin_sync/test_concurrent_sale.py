"""The check-in sync keeps up with a 100-client sale: real threads holding, paying and
cancelling against PostgreSQL while the event-log relay and the consumer run beside them."""

from __future__ import annotations

import random
import threading
import time

import pytest
from django.db import connections

from checkin_sync.consumer import open_reader, sync_from_log
from checkin_sync.models import AppliedEvent
from flights.models import Seat, SeatStatus
from kernel.errors import DomainError
from kernel.eventlog.publisher import close_publishers
from kernel.eventlog.relay import relay_event_log
from kernel.models import OutboxEvent
from payments.cancellation import cancel_booking
from payments.paying import pay_for_booking
from tests.checkin_sync.mirror import bookings_applied_out_of_order, mirror, truth
from tests.concurrency import run_concurrently
from tests.factories import UserFactory, named_hold

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]
GOOD_CARD = "4242424242424242"
CLIENTS = 100


class Beside(threading.Thread):
    """Runs `step` again and again on its own connection until stopped."""

    def __init__(self, step, pause: float) -> None:
        super().__init__(daemon=True)
        self.step, self.pause, self.halt = step, pause, threading.Event()
        self.errors: list[BaseException] = []

    def run(self) -> None:
        try:
            while not self.halt.is_set():
                self.step()
                self.halt.wait(self.pause)
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            connections.close_all()


def client(customer, seats: list[str], flight, rng: random.Random, cancels: bool):
    def buy():
        for _ in range(10):  # a seat someone else took: pick another, as a shopper would
            try:
                booking = named_hold(
                    customer=customer, flight=flight, seats=rng.sample(seats, rng.choice([1, 2]))
                )
                break
            except DomainError:
                continue
        else:
            return None
        pay_for_booking(
            customer=customer,
            booking_id=booking.pk,
            idempotency_key=f"pay-{booking.pk}",
            payment_method=GOOD_CARD,
        )
        if cancels:
            cancel_booking(customer=customer, booking_id=booking.pk, by_staff=True)
        return booking.pk

    return buy


def test_the_check_in_mirror_keeps_up_with_a_100_client_sale_and_equals_postgresql(
    event_log, flight
):
    rng = random.Random(27)
    seats = list(
        Seat.objects.filter(
            sale=flight.sale, fare_class="ECONOMY", status=SeatStatus.AVAILABLE
        ).values_list("seat_no", flat=True)
    )
    customers = [UserFactory() for _ in range(CLIENTS)]
    calls = [
        client(c, seats, flight, random.Random(rng.random()), cancels=n % 5 == 0)
        for n, c in enumerate(customers)
    ]
    reader = open_reader()
    relay = Beside(relay_event_log, pause=0.05)
    consume = Beside(lambda: sync_from_log(reader, idle_seconds=0.2), pause=0)
    relay.start()
    consume.start()
    try:
        started = time.monotonic()
        outcomes = run_concurrently(calls, threads=CLIENTS)
        sale_seconds = time.monotonic() - started
        applied_during_sale = AppliedEvent.objects.count()
        sold = [pk for pk in outcomes.results if pk is not None]
        deadline = time.monotonic() + 60
        while mirror() != truth() or OutboxEvent.objects.filter(logged_at__isnull=True).exists():
            assert time.monotonic() < deadline, (
                "the check-in mirror did not catch up in 60 s",
                relay.errors,
                consume.errors,
                outcomes.errors[:3],
                OutboxEvent.objects.filter(logged_at__isnull=True).count(),
                AppliedEvent.objects.count(),
                OutboxEvent.objects.count(),
            )
            time.sleep(0.5)
        caught_up_after = time.monotonic() - started - sale_seconds
    finally:
        for beside in (relay, consume):
            beside.halt.set()
        for beside in (relay, consume):
            beside.join(timeout=30)
        reader.close()
        close_publishers()
    print(
        f"\n{len(sold)} bookings in {sale_seconds:.1f} s; {applied_during_sale} events applied "
        f"during the sale; the mirror equalled PostgreSQL {caught_up_after:.1f} s after it"
    )

    assert outcomes.errors == [] and relay.errors == [] and consume.errors == []
    assert len(sold) >= CLIENTS * 0.8
    assert mirror() == truth()
    assert bookings_applied_out_of_order() == []
    assert AppliedEvent.objects.count() == len(event_log.messages()) == OutboxEvent.objects.count()
    assert applied_during_sale > 0  # it kept up during the sale, not only afterwards
