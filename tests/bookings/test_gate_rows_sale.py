"""Ticket credentials, gate scans and compensation entries carry their sale (bookings 0023,
flights 0014), so a Citus cluster can distribute them by sale; serials and certificate ids
are unique per sale, and every lookup names the sale.  The migrations go forward and back
with live rows; the lookups still find the right sale's ticket when another sale repeats
its serial (with a control: the serial alone no longer names one ticket)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from bookings.gate_keys import certify_ticket_key
from bookings.gate_sync import ScanReport, open_gate, sync_gate_scans
from bookings.models import GateScan, Ticket, TicketCredential
from bookings.tickets import scan_ticket
from flights.denied_boarding import denial_order, deny_boarding
from flights.models import Compensation
from flights.rerouting import reroute_pending
from tests.bookings.test_sale_migration import latest, migrate
from tests.events.factories import EventFactory
from tests.events.test_event_tickets import seated_tickets
from tests.factories import UserFactory
from tests.flights.oversold import oversold_flight
from tests.payments.write_log import mixed_transactions, recording_writes, sales_written_to

BEFORE = [
    ("bookings", "0021_notification_sale"),
    ("flights", "0013_departure_taken_off_airport_local_names"),
]


def gate_rows(event, operator):
    """A ticket with a replaced and a current credential, and a gate's scans of it and of a
    serial no ticket of the sale has."""
    _, (ticket, _) = seated_tickets(UserFactory(), event)
    certify_ticket_key(ticket=ticket, public_key=None)
    certify_ticket_key(ticket=ticket, public_key=None)
    device = open_gate(
        sale_id=event.sale_id, name="North", operator=operator, gate_time=timezone.now()
    )
    now = timezone.now()
    sync_gate_scans(
        device_id=device.pk,
        gate_time=now,
        scans=[
            ScanReport("1", ticket.serial, "", "valid", now - timedelta(minutes=1)),
            ScanReport("2", "no-such-serial", "", "unknown", now),
        ],
    )
    return ticket, device


@pytest.mark.django_db(transaction=True)
def test_credentials_scans_and_compensation_get_their_parents_sale_forward_and_back():
    operator = UserFactory(is_staff=True)
    events = EventFactory(), EventFactory()
    rows = [gate_rows(event, operator) for event in events]
    flight, _later, _tickets = oversold_flight()
    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    deny_boarding(flight_id=flight.pk, staff=operator, expected_passenger_ids=expected)
    # Each rerouting booked (its own step): flights 0017 goes back only without one pending.
    assert reroute_pending() == 2
    assert set(Compensation.objects.values_list("flight_id", flat=True)) == {flight.pk}
    counts = (TicketCredential.objects.count(), GateScan.objects.count())
    assert counts == (4, 4)
    try:
        old = migrate(BEFORE)
        for model in ("TicketCredential", "GateScan"):
            fields = {f.name for f in old.get_model("bookings", model)._meta.get_fields()}
            assert "sale" not in fields, model
        fields = {f.name for f in old.get_model("flights", "Compensation")._meta.get_fields()}
        assert "flight" not in fields
        assert old.get_model("bookings", "GateScan").objects.count() == 4

        migrate(latest())
        for (ticket, device), event in zip(rows, events, strict=True):
            assert set(
                TicketCredential.objects.filter(ticket=ticket).values_list("sale_id", flat=True)
            ) == {event.sale_id}
            # The unknown serial's scan has no ticket: its sale is the device's.
            assert set(
                GateScan.objects.filter(device=device).values_list("sale_id", flat=True)
            ) == {event.sale_id}
        assert list(Compensation.objects.values_list("flight_id", flat=True)) == [flight.pk] * 2
        assert (TicketCredential.objects.count(), GateScan.objects.count()) == counts
    finally:
        migrate(latest())


@pytest.mark.django_db
def test_a_serial_is_one_per_sale_and_a_printed_code_finds_its_own_sales_ticket():
    first, second = EventFactory(), EventFactory()
    _, (mine, _) = seated_tickets(UserFactory(), first)
    _, (other, _) = seated_tickets(UserFactory(), second)
    # Another sale may repeat the serial (both random): the rule is per sale ...
    Ticket.objects.filter(pk=other.pk).update(serial=mine.serial)
    # ... and in one sale it is refused.
    _, (_, twin) = seated_tickets(UserFactory(), first, seats=("1-1-3", "1-1-4"))
    with pytest.raises(IntegrityError), transaction.atomic():
        Ticket.objects.filter(pk=twin.pk).update(serial=mine.serial)

    # Control: the serial alone now names two tickets.
    assert Ticket.objects.filter(serial=mine.serial).count() == 2
    staff = UserFactory(is_staff=True)
    result = scan_ticket(code=mine.code, sale_id=first.sale_id, scanned_by=staff)
    assert result.ticket.pk == mine.pk, result
    elsewhere = scan_ticket(code=mine.code, sale_id=second.sale_id, scanned_by=staff)
    assert elsewhere.ticket.pk == mine.pk and elsewhere.outcome == "wrong_event", elsewhere


@pytest.mark.django_db
def test_a_gate_settles_its_own_sales_ticket_when_another_sale_repeats_the_serial():
    operator = UserFactory(is_staff=True)
    first, second = EventFactory(), EventFactory()
    _, (mine, _) = seated_tickets(UserFactory(), first)
    _, (other, _) = seated_tickets(UserFactory(), second)
    Ticket.objects.filter(pk=other.pk).update(serial=mine.serial)
    device = open_gate(
        sale_id=first.sale_id, name="North", operator=operator, gate_time=timezone.now()
    )
    now = timezone.now()
    _, (scan,) = sync_gate_scans(
        device_id=device.pk,
        gate_time=now,
        scans=[ScanReport("1", mine.serial, "", "valid", now - timedelta(minutes=1))],
    )
    assert (scan.sale_id, scan.ticket_id, scan.flag) == (first.sale_id, mine.pk, "")
    assert Ticket.objects.get(pk=mine.pk).status == "USED"
    assert Ticket.objects.get(pk=other.pk).status == "VALID"


@pytest.mark.django_db(transaction=True)
def test_the_gates_writes_are_each_one_sales_and_name_it_in_their_own_column():
    """Certifying keys, opening a gate and syncing its scans (tests/payments/write_log.py's
    triggers read each row's own sale column now): one sale per transaction."""
    operator = UserFactory(is_staff=True)
    event = EventFactory()
    with recording_writes():
        gate_rows(event, operator)
        tables = ("bookings_ticketcredential", "bookings_gatescan")
        gate_sales = {t: sales_written_to(t) for t in tables}
        mixed = mixed_transactions()
    assert not mixed, "\n".join(map(str, mixed))
    assert gate_sales == {
        "bookings_ticketcredential": {event.sale_id},
        "bookings_gatescan": {event.sale_id},
    }
