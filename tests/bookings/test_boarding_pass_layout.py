"""Issue 15: the boarding pass prints arrival, boarding time (departure minus a setting) and
the gate, and no value runs into the QR code (each line fits the column beside it)."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from reportlab.pdfbase.pdfmetrics import stringWidth

from bookings import ticket_render
from bookings.models import Ticket
from flights.models import Flight
from kernel.outbox import relay_outbox
from languages.formatting import format_when
from tests.bookings.confirming import hold_and_confirm

pytestmark = pytest.mark.django_db

LONG_NAME = "Maximiliane Alexandra von Hohenzollern-Sigmaringen-Württemberg-Baden"


@pytest.fixture
def ticket(customer, flight):
    booking = hold_and_confirm(customer, flight, seats=["12A"], names=[LONG_NAME])
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    return Ticket.objects.get(booking=booking)


def rows(ticket):
    return dict(ticket_render.ticket_rows(ticket))


def test_the_pass_has_arrival_boarding_time_and_gate_see_screens(ticket, settings):
    settings.BOARDING_MINUTES_BEFORE_DEPARTURE = 40
    flight = ticket.sale.flight
    origin_zone = ZoneInfo(flight.origin.time_zone)
    boarding = (flight.departure_at - timedelta(minutes=40)).astimezone(origin_zone)
    arrival = flight.arrival_at.astimezone(ZoneInfo(flight.destination.time_zone))
    shown = rows(ticket)
    assert shown["Boarding"] == f"{format_when(boarding)} {boarding.tzname()}"
    assert shown["Arrival"] == f"{format_when(arrival)} {arrival.tzname()}"
    assert shown["Boarding"].endswith(f", {boarding:%H:%M} {boarding.tzname()}")
    assert shown["Gate"] == "see screens"
    Flight.objects.filter(pk=flight.pk).update(gate="B12")
    ticket.refresh_from_db()
    ticket.sale.flight.refresh_from_db()
    assert rows(ticket)["Gate"] == "B12"


def test_no_line_runs_into_the_qr_code(ticket):
    _, bold = ticket_render._fonts()
    layout = ticket_render.ticket_layout(ticket)
    lines = [line for _, value in layout for line in value]
    assert dict(layout)["Passenger"][0] != LONG_NAME  # the long name was wrapped...
    wrapped = "".join(dict(layout)["Passenger"]).replace(" ", "")
    assert wrapped == LONG_NAME.replace(" ", "")  # ...and nothing was lost
    for line in lines:
        width = stringWidth(line, bold, ticket_render.VALUE_SIZE)
        assert (
            ticket_render.VALUE_X + width
            <= ticket_render.PAGE_WIDTH - ticket_render.MARGIN - ticket_render.QR_SIZE
        ), line
    pdf = ticket_render.ticket_pdf(ticket)
    assert pdf.startswith(b"%PDF")
