"""Gate close racing late boarding scans, and two gate closes at once (the beat and a staff
member), on real PostgreSQL with real threads.  The control shows what the ticket's
conditional UPDATE prevents: without it, a passenger the gate let board is also a no-show."""

import time

import pytest
from django.db import transaction
from django.utils import timezone

from bookings.models import Passenger, Ticket, TicketStatus
from bookings.seating import settle_no_show, unboarded_tickets
from flights.departure import close_gate
from flights.models import CabinDeparture, NoShow
from flights.services import check_inventory
from tests.concurrency import run_concurrently
from tests.factories import StaffFactory
from tests.flights.departing import board, seated, seatless, small_flight

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


@pytest.fixture
def gate():
    """A flight of 18 seats, all sold in six bookings of three, nobody boarded yet."""
    flight = small_flight(rows=3)
    tickets = []
    for row in (1, 2, 3):
        tickets += seated(flight, f"{row}A", f"{row}B", f"{row}C")
        tickets += seated(flight, f"{row}D", f"{row}E", f"{row}F")
    return flight, tickets, StaffFactory()


def scanner(ticket, flight, staff):
    def scan():
        return ("scan", ticket.pk, board(ticket, staff=staff, flight=flight).outcome)

    return scan


def assert_boarded_xor_no_show(outcomes, tickets):
    """Every ticket ends boarded or a no-show, never both, and the gate's answers agree."""
    assert outcomes.errors == []
    let_on = {pk for kind, pk, outcome in outcomes.results if kind == "scan" and outcome == "valid"}
    no_shows = set(NoShow.objects.values_list("ticket_id", flat=True))
    used = set(Ticket.objects.filter(status=TicketStatus.USED).values_list("pk", flat=True))
    revoked = set(Ticket.objects.filter(status=TicketStatus.REVOKED).values_list("pk", flat=True))
    assert let_on & no_shows == set()
    assert let_on == used
    assert no_shows == revoked
    assert used | revoked == {t.pk for t in tickets}
    return let_on, no_shows


def test_gate_close_racing_late_scans_boards_or_voids_each_ticket_once(gate):
    flight, tickets, staff = gate

    def closer():
        return ("close", close_gate(flight_id=flight.pk), None)

    outcomes = run_concurrently([closer, *(scanner(t, flight, staff) for t in tickets)])

    let_on, no_shows = assert_boarded_xor_no_show(outcomes, tickets)
    (result,) = [r for kind, r, _ in outcomes.results if kind == "close"]
    assert result.settled and result.no_shows == len(no_shows)
    record = CabinDeparture.objects.get(flight=flight)
    assert (record.sold, record.boarded, record.no_shows) == (18, len(let_on), len(no_shows))
    assert check_inventory(sale_id=flight.sale_id) == []


def settler(ticket_id, now):
    def settle():
        return ("settle", ticket_id, settle_no_show(ticket_id=ticket_id, now=now).no_show)

    return settle


def test_each_ticket_settled_while_scanned_ends_boarded_or_a_no_show(gate):
    flight, tickets, staff = gate
    # The list gate close works from is read first, then every settlement races its scan.
    listed = list(unboarded_tickets(sale_id=flight.sale_id).values_list("pk", flat=True))
    now = timezone.now()

    outcomes = run_concurrently(
        [*(settler(pk, now) for pk in listed), *(scanner(t, flight, staff) for t in tickets)]
    )

    assert outcomes.errors == []
    let_on = {pk for kind, pk, outcome in outcomes.results if kind == "scan" and outcome == "valid"}
    voided = {pk for kind, pk, won in outcomes.results if kind == "settle" and won}
    assert let_on & voided == set()
    assert let_on | voided == set(listed)
    revoked = set(Ticket.objects.filter(status=TicketStatus.REVOKED).values_list("pk", flat=True))
    assert revoked == voided


def naive_settle(ticket_id, now):
    """The control: decide from a read, then write unconditionally (what the guard forbids)."""

    def settle():
        was_valid = Ticket.objects.filter(pk=ticket_id, status=TicketStatus.VALID).exists()
        time.sleep(0.2)  # the gap between the read and the write, where the scan lands
        if not was_valid:
            return ("settle", ticket_id, False)
        with transaction.atomic():
            Ticket.objects.filter(pk=ticket_id).update(status=TicketStatus.REVOKED, revoked_at=now)
        return ("settle", ticket_id, True)

    return settle


def test_control_without_the_conditional_update_a_boarded_passenger_is_also_a_no_show(gate):
    flight, tickets, staff = gate
    now = timezone.now()

    outcomes = run_concurrently(
        [*(naive_settle(t.pk, now) for t in tickets), *(scanner(t, flight, staff) for t in tickets)]
    )

    assert outcomes.errors == []
    let_on = {pk for kind, pk, outcome in outcomes.results if kind == "scan" and outcome == "valid"}
    voided = {pk for kind, pk, won in outcomes.results if kind == "settle" and won}
    assert let_on & voided, "the race did not show: the control proves nothing"


def test_two_gate_closes_at_once_seat_each_standby_passenger_once():
    flight = small_flight(rows=2, overbook_limit=6)
    staff = StaffFactory()
    absent = []
    for row in (1, 2):
        absent += seated(flight, f"{row}A", f"{row}B", f"{row}C")
        seated_now = seated(flight, f"{row}D", f"{row}E", f"{row}F")
        for ticket in seated_now:
            board(ticket, staff=staff, flight=flight)
    standby = seatless(flight, 3) + seatless(flight, 2)
    for ticket in standby:
        board(ticket, staff=staff, flight=flight)

    outcomes = run_concurrently([lambda: close_gate(flight_id=flight.pk)] * 2)

    assert outcomes.errors == []
    assert sum(r.no_shows for r in outcomes.results) == len(absent) == NoShow.objects.count()
    given = list(NoShow.objects.exclude(seat_given_to=None).values_list("seat_given_to", flat=True))
    assert sorted(given) == sorted(t.pk for t in standby)  # five seats, five standby, once each
    seats = [Passenger.objects.get(pk=t.passenger_id).seat_id for t in standby]
    assert None not in seats and len(set(seats)) == len(seats)
    assert CabinDeparture.objects.filter(flight=flight).count() == 1
    assert check_inventory(sale_id=flight.sale_id) == []
