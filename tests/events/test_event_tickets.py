"""Event tickets: the entry ticket (PDF, tickets page, e-mail) says event, venue, section, row,
seat or standing area, and category; the entrance scans per event, exactly once."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connections, transaction
from django.template import Context, Template
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from bookings import ticket_render
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.models import Notification, Ticket, TicketStatus
from bookings.notifications import send_notification
from bookings.tickets import ScanOutcome, scan_ticket
from kernel.outbox import relay_outbox
from tests.bookings.confirming import cancel_confirmed, confirm, emit_refund, hold_and_confirm
from tests.concurrency import run_concurrently
from tests.events.factories import EventFactory

SCAN_URL = "/api/checkin/scan"


def relay():
    relay_outbox(now=timezone.now() + timedelta(hours=1))


def seated_tickets(customer, event, seats=("1-1-1", "1-1-2"), names=("Ana Lima", "Bo Chen")):
    booking = hold_seats(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=list(seats),
        passenger_names=list(names),
    )
    booking = confirm(booking)
    relay()
    return booking, list(Ticket.objects.filter(booking=booking).order_by("seat_no"))


def standing_ticket(customer, event):
    booking = hold_seatless(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="GA-3",
        passengers=1,
        passenger_names=["Cy Dorn"],
    )
    booking = confirm(booking)
    relay()
    return booking, Ticket.objects.get(booking=booking)


@pytest.fixture
def event(db):
    return EventFactory(name="Night of Strings")


# --- what the ticket says ----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_seated_entry_ticket_names_event_venue_section_row_seat_and_category(customer, event):
    _, (ticket, _) = seated_tickets(customer, event)
    rows = dict(ticket_render.ticket_rows(ticket))
    assert rows["Name"] == "Ana Lima"
    assert rows["Event"] == "Night of Strings"
    assert rows["Venue"] == f"{event.venue.name}, Berlin"
    assert rows["Starts"].endswith(("CET", "CEST"))  # local time at the venue
    assert (rows["Section"], rows["Row"], rows["Seat"]) == ("Stalls", "1", "1")
    assert rows["Category"] == "A — Front stalls"
    assert rows["Ticket"] == ticket.serial
    pdf = ticket_render.ticket_pdf(ticket)
    assert pdf.startswith(b"%PDF") and b"Entry ticket Night of Strings 1-1-1" in pdf


@pytest.mark.django_db
def test_a_standing_ticket_names_the_area_and_its_category(customer, event):
    _, ticket = standing_ticket(customer, event)
    rows = dict(ticket_render.ticket_rows(ticket))
    assert rows["Place"] == "Standing — Floor"
    assert rows["Category"] == "GA — Standing"
    assert "Section" not in rows and "Seat" not in rows
    assert ticket_render.ticket_pdf(ticket).startswith(b"%PDF")


@pytest.mark.django_db
def test_the_tickets_list_and_the_pdf_download_speak_of_the_event(client, customer, event):
    booking, (ticket, _) = seated_tickets(customer, event)
    # The tickets page draws each ticket with the `ticket_face` filter (the page around it is
    # the booking page's).
    line = Template(
        "{% load sales %}{% with face=t|ticket_face %}{{ face.place }} · {{ face.fare }} | "
        "{{ face.qr_alt }} | {{ face.download }}{% endwith %}"
    ).render(Context({"t": ticket}))
    assert line == (
        "Stalls, row 1, seat 1 · A — Front stalls | "
        "QR code of the ticket of Ana Lima, Stalls, row 1, seat 1 | Download ticket (PDF)"
    )
    client.force_login(customer)
    pdf = client.get(reverse("bookings:ticket-pdf", args=[booking.pk, ticket.pk]))
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert f'filename="ticket-event-{event.pk}-1-1-1.pdf"' in pdf["Content-Disposition"]


@pytest.mark.django_db
def test_the_tickets_api_lists_event_tickets_and_serves_their_pdf(customer, event):
    booking, _ = seated_tickets(customer, event)
    api = APIClient()
    api.force_authenticate(customer)
    listed = api.get(f"/api/bookings/{booking.pk}/tickets").json()
    assert [(t["seat"], t["fareClass"], t["status"]) for t in listed] == [
        ("1-1-1", "A", "VALID"),
        ("1-1-2", "A", "VALID"),
    ]
    # The same words as on the printed ticket: where to go, and what was bought.
    assert [(t["place"], t["fare"]) for t in listed] == [
        ("Stalls, row 1, seat 1", "A — Front stalls"),
        ("Stalls, row 1, seat 2", "A — Front stalls"),
    ]
    pdf = api.get(listed[0]["links"]["pdf"])
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert f"ticket-event-{event.pk}-1-1-1.pdf" in pdf["Content-Disposition"]


@pytest.mark.django_db
def test_the_confirmation_email_carries_the_entry_tickets(customer, event, mailoutbox):
    booking, _ = seated_tickets(customer, event)
    send_notification(notification_id=Notification.objects.get(booking=booking).pk)

    message = mailoutbox[-1]
    assert message.subject == "Your tickets for Night of Strings"
    assert "flight" not in message.body.lower() and "boarding" not in message.body.lower()
    assert "Night of Strings" in message.body and event.venue.name in message.body
    assert "Ana Lima, Stalls, row 1, seat 1, A — Front stalls" in message.body
    html = message.alternatives[0][0]
    assert "Stalls, row 1, seat 1" in html and "A — Front stalls" in html
    assert [name for name, _c, _m in message.attachments] == [
        f"ticket-event-{event.pk}-1-1-1.pdf",
        f"ticket-event-{event.pk}-1-1-2.pdf",
    ]


@pytest.mark.django_db
def test_cancellation_and_refund_emails_name_the_event(customer, event, mailoutbox):
    booking, _ = seated_tickets(customer, event)
    cancel_confirmed(booking)
    emit_refund(booking, refund_id="rf_7", amount="160.00")
    relay()
    for pk in Notification.objects.filter(status="PENDING").values_list("pk", flat=True):
        send_notification(notification_id=pk)
    by_subject = {m.subject: m for m in mailoutbox}
    assert set(by_subject) >= {
        "Your booking for Night of Strings is cancelled",
        "Refund for your booking for Night of Strings",
    }
    cancelled = by_subject["Your booking for Night of Strings is cancelled"]
    assert f"Your booking {booking.pk} for Night of Strings is cancelled." in cancelled.body
    refund = by_subject["Refund for your booking for Night of Strings"].body
    assert "rf_7" in refund and "flight" not in refund.lower()


# --- the entrance ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_event_ticket_gets_in_once(customer, staff_user, event):
    _, (ticket, _) = seated_tickets(customer, event)
    first = scan_ticket(code=ticket.code, sale_id=event.sale_id, scanned_by=staff_user)
    again = scan_ticket(code=ticket.code, sale_id=event.sale_id, scanned_by=staff_user)
    assert first.outcome == ScanOutcome.VALID
    assert again.outcome == ScanOutcome.ALREADY_USED
    ticket.refresh_from_db()
    assert (ticket.status, ticket.used_by) == (TicketStatus.USED, staff_user)


@pytest.mark.django_db
def test_tickets_of_another_event_or_a_flight_are_refused_and_stay_valid(
    customer, staff_user, event, flight
):
    _, (ticket, _) = seated_tickets(customer, event)
    elsewhere = EventFactory(name="Other Night")
    refused = scan_ticket(code=ticket.code, sale_id=elsewhere.sale_id, scanned_by=staff_user)
    assert refused.outcome == ScanOutcome.WRONG_EVENT
    assert refused.message == "This ticket is for Night of Strings."
    hold_and_confirm(customer, flight)
    relay()
    flight_ticket = Ticket.objects.filter(sale_id=flight.sale_id).first()
    at_event = scan_ticket(code=flight_ticket.code, sale_id=event.sale_id, scanned_by=staff_user)
    assert at_event.outcome == ScanOutcome.WRONG_EVENT
    at_flight = scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user)
    assert at_flight.outcome == ScanOutcome.WRONG_FLIGHT
    assert set(Ticket.objects.values_list("status", flat=True)) == {TicketStatus.VALID}


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_two_simultaneous_scans_of_an_event_ticket_let_one_person_in(customer, staff_user, event):
    _, (ticket, _) = seated_tickets(customer, event)
    for _round in range(5):
        Ticket.objects.filter(pk=ticket.pk).update(
            status=TicketStatus.VALID, used_at=None, used_by=None
        )
        outcomes = run_concurrently(
            [lambda: scan_ticket(code=ticket.code, sale_id=event.sale_id, scanned_by=staff_user)]
            * 2
        )
        assert outcomes.errors == []
        assert sorted(r.outcome for r in outcomes.results) == ["already_used", "valid"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_control_without_the_conditional_update_both_scans_get_in(customer, event):
    """Control: read-then-write lets both scanners in, so the test above can fail."""
    _, (ticket, _) = seated_tickets(customer, event)
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

    assert run_concurrently([naive_scan, naive_scan]).results == ["valid", "valid"]


@pytest.fixture
def staff_api(staff_user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff_user).key}")
    return client


@pytest.mark.django_db
def test_scan_api_takes_an_event_id(staff_api, customer, event):
    booking, (ticket, other) = seated_tickets(customer, event)

    def scan(code, event_id=event.pk):
        response = staff_api.post(SCAN_URL, {"code": code, "eventId": event_id}, format="json")
        assert response.status_code == 200, response.content
        return response.json()

    body = scan(ticket.code)
    assert body["result"] == "valid"
    assert body["ticket"] == {
        "serial": ticket.serial,
        "bookingId": booking.pk,
        "eventId": event.pk,
        "passengerName": "Ana Lima",
        "seat": "1-1-1",
        "fareClass": "A",
        "status": "USED",
        "usedAt": body["ticket"]["usedAt"],
    }
    assert scan(ticket.code)["result"] == "already_used"
    wrong = scan(other.code, EventFactory().pk)
    assert wrong["result"] == "wrong_event" and wrong["ticket"]["status"] == "VALID"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "status"),
    [
        ({"code": "x", "eventId": 1, "flightId": 1}, 400),
        ({"code": "x", "eventId": "seven"}, 400),
        ({"code": "x", "eventId": 999999}, 404),
    ],
)
def test_scan_api_refuses_bad_event_input(staff_api, payload, status):
    response = staff_api.post(SCAN_URL, payload, format="json")
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"


@pytest.mark.django_db
def test_a_draft_event_has_no_entrance(staff_api, customer):
    draft = EventFactory(publish=False)
    response = staff_api.post(SCAN_URL, {"code": "x", "eventId": draft.pk}, format="json")
    assert response.status_code == 404


@pytest.mark.django_db
def test_the_gate_page_scans_for_an_event(client, staff_user, customer, event, flight):
    _, (ticket, _) = seated_tickets(customer, event)
    client.force_login(staff_user)
    url = reverse("bookings:checkin")

    listed = client.get(url, {"kind": "event"}).content.decode()
    assert "Night of Strings" in listed and flight.code not in listed
    assert 'name="event"' in listed
    assert flight.code in client.get(url).content.decode()  # the flight gate is the default
    found = client.get(url, {"kind": "event", "q": "strings"}).content.decode()
    assert "Night of Strings" in found
    assert "No event matches" in client.get(url, {"kind": "event", "q": "zzz"}).content.decode()

    valid = client.post(url, {"kind": "event", "event": event.pk, "code": ticket.code})
    html = valid.content.decode()
    assert 'data-outcome="valid"' in html and "Valid: let in" in html
    assert "Stalls, row 1, seat 1" in html and "A — Front stalls" in html
    used = client.post(url, {"kind": "event", "event": event.pk, "code": ticket.code})
    assert 'data-outcome="already_used"' in used.content.decode()
    other = EventFactory(name="Other Night")
    wrong = client.post(url, {"kind": "event", "event": other.pk, "code": ticket.code})
    assert 'data-outcome="wrong_event"' in wrong.content.decode()
    for bad in (999999, 10**30, -1):
        unknown = client.post(url, {"kind": "event", "event": bad, "code": ticket.code})
        assert unknown.status_code == 400 and "Choose the event" in unknown.content.decode()
