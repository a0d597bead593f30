"""The gate's boarding scan asks the exit-row rule (flights.rules.require_exit_row_confirmation,
through the catalogue): a passenger in an exit-row seat who never confirmed its conditions is
not boarded, the ticket stays valid, and the agent resolves it on the spot by confirming them
with the passenger (recorded on the passenger with the boarding).  Service, API and page; the
control takes the rule away and the unconfirmed passenger boards."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from bookings.models import Passenger, Ticket, TicketStatus
from bookings.tickets import ScanOutcome, scan_ticket
from flights.catalogue import FlightCatalogue
from flights.models import Flight
from kernel.outbox import relay_outbox
from tests.bookings.confirming import hold_and_confirm


@pytest.fixture
def exit_row_tickets(customer, flight):
    """Ana 12A and Bo 12B, row 12 an exit row, held without confirming (an API hold may
    leave it for later), never checked in online."""
    Flight.objects.filter(pk=flight.pk).update(exit_rows=[12])
    booking = hold_and_confirm(customer, flight)
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    return list(Ticket.objects.filter(booking=booking).order_by("seat_no"))


def state(ticket):
    ticket.refresh_from_db()
    confirmed = Passenger.objects.get(pk=ticket.passenger_id).seat_conditions_confirmed_at
    return ticket.status, confirmed is not None


@pytest.mark.django_db
def test_an_unconfirmed_exit_row_passenger_is_held_at_the_gate_until_the_agent_confirms(
    staff_user, flight, exit_row_tickets
):
    ticket = exit_row_tickets[0]

    refused = scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user)

    assert refused.outcome == ScanOutcome.CONDITIONS_UNCONFIRMED
    assert "12A" in refused.message and "exit row" in refused.message
    assert state(ticket) == (TicketStatus.VALID, False), "not boarded, nothing recorded"

    boarded = scan_ticket(
        code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user, conditions_confirmed=True
    )

    assert boarded.outcome == ScanOutcome.VALID
    assert state(ticket) == (TicketStatus.USED, True)


@pytest.mark.django_db
def test_a_confirmation_given_before_boards_and_a_used_ticket_still_reads_already_used(
    staff_user, flight, exit_row_tickets
):
    ticket = exit_row_tickets[1]
    Passenger.objects.filter(pk=ticket.passenger_id).update(
        seat_conditions_confirmed_at=timezone.now()
    )

    first = scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user)
    again = scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user)

    assert (first.outcome, again.outcome) == (ScanOutcome.VALID, ScanOutcome.ALREADY_USED)


@pytest.mark.django_db
def test_control_without_the_rule_the_unconfirmed_exit_row_passenger_boards(
    staff_user, flight, exit_row_tickets, monkeypatch
):
    """The gate's refusal comes from the catalogue's one rule: take it away and the passenger
    who never confirmed boards unchecked (what the scan did before)."""
    monkeypatch.setattr(FlightCatalogue, "require_seat_conditions", lambda *a, **k: None)
    ticket = exit_row_tickets[0]

    result = scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user)

    assert result.outcome == ScanOutcome.VALID
    assert state(ticket) == (TicketStatus.USED, False)


@pytest.mark.django_db
def test_the_scan_api_answers_the_refusal_and_boards_with_the_agents_confirmation(
    staff_user, flight, exit_row_tickets
):
    api = APIClient()
    api.force_authenticate(staff_user)
    ticket = exit_row_tickets[0]
    body = {"code": ticket.code, "flightId": flight.pk}

    refused = api.post("/api/checkin/scan", body, format="json")
    boarded = api.post(
        "/api/checkin/scan", {**body, "seatConditionsConfirmed": True}, format="json"
    )

    assert refused.status_code == 200 and refused.json()["result"] == "conditions_unconfirmed"
    assert "12A" in refused.json()["message"]
    assert boarded.json()["result"] == "valid"
    assert state(ticket) == (TicketStatus.USED, True)


@pytest.mark.django_db
def test_the_gate_page_offers_the_confirmation_and_the_same_code_boards(
    client, staff_user, flight, exit_row_tickets
):
    client.force_login(staff_user)
    url = reverse("bookings:checkin")
    ticket = exit_row_tickets[0]

    refused = client.post(url, {"flight": flight.pk, "code": ticket.code}).content.decode()

    assert 'data-outcome="conditions_unconfirmed"' in refused
    assert 'name="conditions_confirmed"' in refused and f'value="{ticket.code}"' in refused
    assert state(ticket) == (TicketStatus.VALID, False)

    boarded = client.post(
        url, {"flight": flight.pk, "code": ticket.code, "conditions_confirmed": "on"}
    ).content.decode()

    assert 'data-outcome="valid"' in boarded
    assert state(ticket) == (TicketStatus.USED, True)
