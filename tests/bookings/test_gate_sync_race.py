"""Two offline gates admitted the same ticket and sync at the same moment (issue 29, item 3),
with real threads on their own connections: exactly one admission stands and the other is
flagged DUPLICATE, whichever sync commits first.  The control takes the ticket lock away:
each sync then settles without seeing the other's admission, and both stand."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from bookings import gate_sync
from bookings.models import GateScan, ScanFlag, Ticket
from tests.bookings.test_offline_gates import open_offline_gate, phone, sync
from tests.concurrency import run_concurrently
from tests.events.factories import EventFactory
from tests.events.test_event_tickets import seated_tickets
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def event():
    return EventFactory()


@pytest.fixture
def operator():
    from django.contrib.auth.models import Permission

    user = UserFactory(username="door", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="operate_gate"))
    return user


def both_settle_together(monkeypatch, *, wait: float = 1.0) -> None:
    """Each sync, its scans inserted, waits (up to `wait` s) for the other to get as far
    before it settles: the moment where only the lock keeps them apart."""
    barrier = threading.Barrier(2)
    real = gate_sync._settle_admissions

    def settle(ticket, **kwargs):
        # Broken after `wait` when the other waits for our lock: then go on alone.
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=wait)
        return real(ticket, **kwargs)

    monkeypatch.setattr(gate_sync, "_settle_admissions", settle)


def scanned_at_both_gates(operator, event):
    _, (ticket, _) = seated_tickets(UserFactory(), event)
    live_code = phone(ticket)
    north = open_offline_gate(operator, event, "North")
    south = open_offline_gate(operator, event, "South")
    assert north.scan(live_code()).outcome == "valid"
    time.sleep(0.3)
    assert south.scan(live_code()).outcome == "valid"
    return ticket, north, south


def test_two_gates_syncing_the_same_ticket_at_once_flag_one_admission(monkeypatch, operator, event):
    ticket, north, south = scanned_at_both_gates(operator, event)
    both_settle_together(monkeypatch)

    outcomes = run_concurrently([lambda: sync(operator, north), lambda: sync(operator, south)])

    assert not outcomes.errors, outcomes.errors
    flags = dict(GateScan.objects.filter(ticket=ticket).values_list("device_id", "flag"))
    assert flags == {north.device_id: ScanFlag.NONE, south.device_id: ScanFlag.DUPLICATE}
    ticket.refresh_from_db()
    assert ticket.used_at == GateScan.objects.get(device_id=north.device_id).scanned_at


def test_control_without_the_ticket_lock_both_admissions_stand(monkeypatch, operator, event):
    ticket, north, south = scanned_at_both_gates(operator, event)
    # Without the lock neither waits for the other, so both reach the barrier: a long wait
    # only matters on a loaded machine (CI), where a thread can start over a second late and
    # the barrier, broken, would let them settle one after the other (a false DUPLICATE).
    both_settle_together(monkeypatch, wait=30.0)
    monkeypatch.setattr(
        gate_sync,
        "lock_tickets",
        lambda ids: list(Ticket.objects.filter(pk__in=ids).order_by("pk")),
    )

    outcomes = run_concurrently([lambda: sync(operator, north), lambda: sync(operator, south)])

    assert not outcomes.errors, outcomes.errors
    flags = dict(GateScan.objects.filter(ticket=ticket).values_list("device_id", "flag"))
    assert flags == {north.device_id: ScanFlag.NONE, south.device_id: ScanFlag.NONE}
