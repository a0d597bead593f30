"""SIGKILL a real Celery worker 10 times while a sale's side effects are in flight.

The sale runs here (holds, payments through the sandbox gateway, cancellations with refunds,
late payments refunded in full, expiries); a real prefork worker in its own process group does
the rest through the real Redis broker: the outbox relay, tickets, e-mails (a file backend, so
every message that left is counted) and refunds.  A killer thread SIGKILLs the whole worker
at random moments and starts a new one.  Then what beat would do later (the relay tick, the
stale e-mail and refund sweeps) runs until everything has settled.

Shown: one ticket set per booking, one refund per decision and at the gateway, one e-mail per
(event, kind) and never two copies of one e-mail, whatever the kills interrupted.
"""

from __future__ import annotations

import random
import re
import signal
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from django.utils import timezone

from bench.stack import app_env, start_worker, stop, wait_for_log
from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus, Notification, NotificationStatus, Ticket
from bookings.notifications import redispatch_stale_notifications
from config.celery import app
from flights.models import Seat, SeatStatus
from flights.services import check_inventory
from kernel.errors import DomainError
from kernel.models import OutboxEvent
from kernel.tasks import relay_outbox
from payments.cancellation import cancel_booking
from payments.models import (
    Refund,
    RefundStatus,
    SandboxCharge,
    SandboxChargeStatus,
    SandboxRefund,
)
from payments.outcomes import confirm_payment
from payments.paying import pay_for_booking
from payments.refunds import requeue_stale_refunds
from tests.celery_queue import purge_queue
from tests.factories import UserFactory, named_hold
from tests.pgbouncer import database_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(900)]

GOOD_CARD = "4242424242424242"
KILLS = 10


class Killer(threading.Thread):
    def __init__(self, env: dict, log: Path, kills: int, seed: int = 17) -> None:
        super().__init__(daemon=True)
        self.env, self.log, self.kills, self.rng = env, log, kills, random.Random(seed)
        self.done_kills = 0
        self.halt = threading.Event()
        self.worker = self._start()

    def _start(self):
        # A fresh log per incarnation, so "ready" means this one is consuming.
        log = self.log.with_name(f"{self.log.stem}-{self.done_kills}.log")
        worker = start_worker(self.env, log, loglevel="INFO")
        try:
            wait_for_log(log, "ready.")
        except BaseException:
            stop(worker, sig=signal.SIGKILL)  # never a stray consumer for the next tests
            raise
        return worker

    def run(self) -> None:
        for _ in range(self.kills):
            if self.halt.wait(self.rng.uniform(0.5, 4.0)):
                return
            stop(self.worker, sig=signal.SIGKILL)  # the whole process group, mid-whatever
            self.done_kills += 1
            self.worker = self._start()

    def shutdown(self) -> None:
        """Never leave a worker behind: it would consume the next test's messages."""
        self.halt.set()
        self.join(timeout=180)
        stop(self.worker)


def sale(customers, flight, *, rounds: int, rng: random.Random) -> None:
    """Holds, payments, cancellations, late payments and expiries, committed one by one."""
    for i in range(rounds):
        customer = customers[i % len(customers)]
        free = list(
            Seat.objects.filter(
                sale=flight.sale, fare_class="ECONOMY", status=SeatStatus.AVAILABLE
            ).values_list("seat_no", flat=True)
        )
        if len(free) < 2:
            return
        try:
            booking = named_hold(
                customer=customer, flight=flight, seats=rng.sample(free, rng.choice([1, 2]))
            )
        except DomainError:
            continue
        roll = rng.random()
        if roll < 0.25:  # left to expire: booking.expired -> e-mail
            Booking.objects.filter(pk=booking.pk).update(
                expires_at=timezone.now() - timedelta(seconds=1)
            )
            expire_holds()
            continue
        if roll < 0.4:  # the money arrives after the hold ended: refunded in full (LATE_PAYMENT)
            paid = pay_for_booking(
                customer=customer, booking_id=booking.pk, idempotency_key=f"pay-{booking.pk}"
            )  # no card: a hosted checkout, finished too late
            Booking.objects.filter(pk=booking.pk).update(
                expires_at=timezone.now() - timedelta(seconds=1)
            )
            charge = SandboxCharge.objects.get(merchant_reference=str(paid.body["paymentId"]))
            SandboxCharge.objects.filter(pk=charge.pk).update(status=SandboxChargeStatus.SUCCEEDED)
            confirm_payment(payment_id=paid.body["paymentId"], reference=charge.pk)
            continue
        pay_for_booking(
            customer=customer,
            booking_id=booking.pk,
            idempotency_key=f"pay-{booking.pk}",
            payment_method=GOOD_CARD,
        )
        if 0.4 <= roll < 0.6:  # cancelled after paying: refund by policy, tickets revoked
            cancel_booking(customer=customer, booking_id=booking.pk, by_staff=True)
        time.sleep(rng.uniform(0.1, 0.5))


def settled() -> bool:
    return (
        not OutboxEvent.objects.filter(published_at__isnull=True).exists()
        and not Notification.objects.filter(
            status__in=[
                NotificationStatus.PENDING,
                NotificationStatus.PREPARING,
                NotificationStatus.SENDING,
            ]
        ).exists()
        and not Refund.objects.filter(status=RefundStatus.PENDING).exists()
    )


def sent_copies(mail_dir: Path) -> Counter:
    copies: Counter = Counter()
    for path in mail_dir.glob("*"):
        for match in re.finditer(r"^X-Seatkeeper-Notification: (\d+)$", path.read_text(), re.M):
            copies[int(match.group(1))] += 1
    return copies


def test_effects_happen_once_while_workers_are_killed(tmp_path, flight, monkeypatch):
    monkeypatch.setitem(settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS", False)
    mail_dir = tmp_path / "mail"
    mail_dir.mkdir()
    purge_queue()
    route = database_env()  # through PgBouncer, as this module's own connections are
    env = app_env(
        route.pop("DATABASE_URL"),
        settings.REDIS_URL,
        CELERY_BROKER_URL=app.conf.broker_url,
        **route,
        EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend",
        EMAIL_FILE_PATH=str(mail_dir),
        SANDBOX_DELIVER_WEBHOOKS="false",
    )
    customers = [UserFactory() for _ in range(6)]
    killer = Killer(env, tmp_path / "worker.log", KILLS)
    killer.start()
    try:
        rng = random.Random(4)
        while killer.is_alive():
            sale(customers, flight, rounds=6, rng=rng)
        killer.join()
        # What beat does later: relay ticks, and the sweeps with their grace periods passed.
        # Swept every 3 s (a flood of relay ticks would only queue up), checked every 0.5 s.
        deadline = time.monotonic() + 400
        next_sweep = 0.0
        while not settled() and time.monotonic() < deadline:
            if time.monotonic() >= next_sweep:
                next_sweep = time.monotonic() + 3
                relay_outbox.delay()
                later = timezone.now() + timedelta(minutes=11)
                redispatch_stale_notifications(now=later)
                requeue_stale_refunds(now=later)
            time.sleep(0.5)
        assert settled(), "side effects did not settle"
    finally:
        killer.shutdown()
        connections.close_all()

    assert killer.done_kills == KILLS
    # One ticket set per confirmed booking (none, or one, for one cancelled before its
    # confirmation was relayed), never two.
    confirmed = Booking.objects.filter(confirmed_at__isnull=False)
    assert confirmed.filter(status=BookingStatus.CONFIRMED).exists()
    for booking in confirmed:
        tickets = Ticket.objects.filter(booking=booking).count()
        if booking.status == BookingStatus.CONFIRMED:
            assert tickets == booking.seat_count, booking
        else:
            assert tickets in (0, booking.seat_count), booking
    # One refund per decision, and one at the gateway per refund.
    refunds = list(Refund.objects.all())
    assert refunds, "the sale made refund decisions"
    assert Counter(r.payment_id for r in refunds).most_common(1)[0][1] == 1
    assert all(r.status == RefundStatus.SUCCEEDED for r in refunds)
    assert SandboxRefund.objects.count() == len(refunds)
    # One e-mail per (event, kind); never two copies of one e-mail.
    notifications = list(Notification.objects.all())
    assert Counter((n.event_id, n.kind) for n in notifications).most_common(1)[0][1] == 1
    copies = sent_copies(mail_dir)
    assert copies, Counter(n.status for n in notifications)
    assert max(copies.values()) == 1, copies.most_common(3)
    sent = {n.pk for n in notifications if n.status == NotificationStatus.SENT}
    uncertain = {n.pk for n in notifications if n.status == NotificationStatus.UNCERTAIN}
    assert sent <= set(copies) <= sent | uncertain
    # Every event that should have told a customer did so (or is honestly marked uncertain).
    # (A booking cancelled before its confirmation was relayed gets no confirmation e-mail:
    # its tickets were never issued and the cancellation e-mail follows.)
    told = Counter(n.event_id for n in notifications)
    for event in OutboxEvent.objects.filter(
        event_type__in=[
            "booking.confirmed",
            "booking.expired",
            "booking.cancelled",
            "refund.issued",
        ]
    ):
        if event.event_type == "booking.confirmed":
            ticketed = Ticket.objects.filter(booking_id=event.payload["bookingId"]).exists()
            assert told[event.pk] == int(ticketed), event
        else:
            assert told[event.pk] == 1, event
    print(f"\n{KILLS} kills; {len(sent)} e-mails sent once, {len(uncertain)} uncertain")
    assert Booking.objects.filter(status=BookingStatus.HELD).count() >= 0
    assert check_inventory(sale_id=flight.sale_id) == []
