"""Gate check-in: the scan service, the staff-only API and the staff-only page."""

import threading
from datetime import timedelta

import pytest
from django.db import connections, transaction
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from bookings.models import Ticket, TicketStatus
from bookings.tickets import ScanOutcome, scan_ticket
from kernel.outbox import relay_outbox
from tests.bookings.confirming import cancel_confirmed, hold_and_confirm
from tests.concurrency import run_concurrently
from tests.factories import FlightFactory

SCAN_URL = "/api/checkin/scan"


def relay():
    return relay_outbox(now=timezone.now() + timedelta(hours=1))


def ticketed(customer, flight, **kwargs):
    """A confirmed booking's tickets; its passengers confirmed their seats' conditions (an
    exit row's: the gate asks for them, tests/bookings/test_gate_exit_row.py)."""
    booking = hold_and_confirm(customer, flight, conditions_confirmed=True, **kwargs)
    relay()
    return booking, list(Ticket.objects.filter(booking=booking).order_by("seat_no"))


@pytest.mark.django_db
def test_a_valid_ticket_boards_once_then_reads_already_used(customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)

    first = scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user)
    again = scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user)

    assert first.outcome == ScanOutcome.VALID
    assert again.outcome == ScanOutcome.ALREADY_USED and "already used" in again.message
    ticket.refresh_from_db()
    assert (ticket.status, ticket.used_by) == (TicketStatus.USED, staff_user)
    assert ticket.used_at is not None


@pytest.mark.django_db
def test_one_flipped_character_is_forged_and_changes_nothing(customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)
    middle = len(ticket.code) // 2
    flipped = (
        ticket.code[:middle]
        + ("A" if ticket.code[middle] != "A" else "B")
        + ticket.code[middle + 1 :]
    )

    assert (
        scan_ticket(code=flipped, sale_id=flight.sale_id, scanned_by=staff_user).outcome == "forged"
    )
    assert (
        scan_ticket(code="not a ticket", sale_id=flight.sale_id, scanned_by=staff_user).outcome
        == "forged"
    )
    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.VALID


@pytest.mark.django_db
def test_a_cancelled_bookings_ticket_is_revoked(customer, staff_user, flight):
    booking, (ticket, other) = ticketed(customer, flight)
    cancel_confirmed(booking)
    # Before the relay revokes it, the booking's state already refuses boarding...
    assert (
        scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user).outcome
        == "revoked"
    )
    relay()
    # ...and afterwards the ticket itself says so.
    assert (
        scan_ticket(code=other.code, sale_id=flight.sale_id, scanned_by=staff_user).outcome
        == "revoked"
    )
    assert set(Ticket.objects.values_list("status", flat=True)) == {TicketStatus.REVOKED}


@pytest.mark.django_db
def test_a_ticket_for_another_flight_is_refused_and_stays_valid(customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)
    elsewhere = FlightFactory()
    result = scan_ticket(code=ticket.code, sale_id=elsewhere.sale_id, scanned_by=staff_user)
    assert result.outcome == ScanOutcome.WRONG_FLIGHT and flight.code in result.message
    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.VALID


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_two_simultaneous_scans_give_one_valid_and_one_already_used(staff_user, customer, flight):
    _, (ticket, _) = ticketed(customer, flight)
    for _round in range(5):
        Ticket.objects.filter(pk=ticket.pk).update(
            status=TicketStatus.VALID, used_at=None, used_by=None
        )
        outcomes = run_concurrently(
            [lambda: scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user)]
            * 2
        )
        assert outcomes.errors == []
        assert sorted(r.outcome for r in outcomes.results) == ["already_used", "valid"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_control_check_then_act_lets_both_scans_board(staff_user, customer, flight):
    """Control: the same race without the conditional UPDATE really double-boards, so the
    test above can fail."""
    _, (ticket, _) = ticketed(customer, flight)
    both_read = threading.Barrier(2)

    def naive_scan():
        try:
            with transaction.atomic():
                status = Ticket.objects.get(pk=ticket.pk).status
                both_read.wait(10)
                if status != TicketStatus.VALID:
                    return "already_used"
                Ticket.objects.filter(pk=ticket.pk).update(
                    status=TicketStatus.USED, used_at=timezone.now()
                )
                return "valid"
        finally:
            connections.close_all()

    outcomes = run_concurrently([naive_scan, naive_scan])
    assert outcomes.results == ["valid", "valid"]


# --- API -----------------------------------------------------------------------------------------


@pytest.fixture
def staff_api(staff_user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff_user).key}")
    return client


@pytest.mark.django_db
def test_scan_api_answers_each_verdict(staff_api, customer, flight):
    booking, (ticket, other) = ticketed(customer, flight)

    def scan(code, flight_id=flight.pk):
        response = staff_api.post(SCAN_URL, {"code": code, "flightId": flight_id}, format="json")
        assert response.status_code == 200, response.content
        return response.json()

    body = scan(ticket.code)
    assert body["result"] == "valid"
    assert body["ticket"] == {
        "serial": ticket.serial,
        "bookingId": booking.pk,
        "flightId": flight.pk,
        "passengerName": "Ana Lima",
        "seat": "12A",
        "fareClass": "ECONOMY",
        "status": "USED",
        "usedAt": body["ticket"]["usedAt"],
    }
    assert body["ticket"]["usedAt"]
    assert scan(ticket.code)["result"] == "already_used"
    assert scan(ticket.code[:-1] + ("x" if ticket.code[-1] != "x" else "y")) == {
        "result": "forged",
        "message": "Forged or unreadable code",
        "ticket": None,
    }
    assert scan(other.code, FlightFactory().pk)["result"] == "wrong_flight"
    cancel_confirmed(booking)
    relay()
    assert scan(other.code)["result"] == "revoked"


@pytest.mark.django_db
def test_scan_api_is_staff_only(customer, flight):
    _, (ticket, _) = ticketed(customer, flight)
    payload = {"code": ticket.code, "flightId": flight.pk}

    anonymous = APIClient().post(SCAN_URL, payload, format="json")
    assert anonymous.status_code == 401
    assert anonymous["Content-Type"] == "application/problem+json"

    customer_client = APIClient()
    customer_client.force_authenticate(customer)
    denied = customer_client.post(SCAN_URL, payload, format="json")
    assert denied.status_code == 403 and denied.json()["status"] == 403

    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.VALID


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "status"),
    [
        ({}, 400),
        ({"code": "x"}, 400),
        ({"code": "x", "flightId": "seven"}, 400),
        ({"code": "", "flightId": 1}, 400),
        ({"code": "x", "flightId": 999999}, 404),
    ],
)
def test_scan_api_rejects_bad_input_as_problem_json(staff_api, payload, status):
    response = staff_api.post(SCAN_URL, payload, format="json")
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["status"] == status


# --- page ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_scan_page_for_staff(client, staff_user, customer, flight):
    _, (ticket, _) = ticketed(customer, flight)
    client.force_login(staff_user)
    url = reverse("bookings:checkin")

    page = client.get(url)
    assert page.status_code == 200 and flight.code in page.content.decode()

    valid = client.post(url, {"flight": flight.pk, "code": ticket.code})
    assert valid.status_code == 200 and 'data-outcome="valid"' in valid.content.decode()
    used = client.post(url, {"flight": flight.pk, "code": ticket.code})
    assert 'data-outcome="already_used"' in used.content.decode()
    forged = client.post(url, {"flight": flight.pk, "code": ticket.code + "x"})
    assert 'data-outcome="forged"' in forged.content.decode()

    missing = client.post(url, {"flight": flight.pk, "code": "  "})
    assert missing.status_code == 400 and "Scan or type a ticket code" in missing.content.decode()
    no_flight = client.post(url, {"flight": "abc", "code": ticket.code})
    assert no_flight.status_code == 400 and "Choose the flight" in no_flight.content.decode()


@pytest.mark.django_db
def test_scan_page_is_staff_only(client, customer, flight, settings):
    settings.LOGIN_URL = "/login/"  # the pages app owns the real login view
    _, (ticket, _) = ticketed(customer, flight)
    url = reverse("bookings:checkin")
    anonymous = client.post(url, {"flight": flight.pk, "code": ticket.code})
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    client.force_login(customer)
    assert client.post(url, {"flight": flight.pk, "code": ticket.code}).status_code == 403
    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.VALID
