"""Issue 31 items 9 and 10, read back out of the PDF with pypdf: a revoked ticket (its booking
cancelled) says VOID, not "valid once", on its PDF and on the booking page; and the heading of
every ticket wraps inside the page in every language ("…посадочный талон" was cut)."""

from __future__ import annotations

import io
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone, translation
from pypdf import PdfReader
from reportlab.pdfbase.pdfmetrics import stringWidth

from bookings import ticket_render
from bookings.models import BookingStatus, Ticket, TicketStatus
from bookings.tickets import is_void
from kernel.outbox import relay_outbox
from tests.bookings.confirming import cancel_confirmed, hold_and_confirm
from tests.events.factories import EventFactory

pytestmark = pytest.mark.django_db

LANGUAGES = ("en", "de", "ru")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def relay():
    relay_outbox(now=timezone.now() + timedelta(hours=1))


@pytest.fixture
def ticket(customer, flight):
    booking = hold_and_confirm(customer, flight, seats=["12A"], names=["Ana Lima"])
    relay()
    return Ticket.objects.get(booking=booking)


def pdf_text(pdf: bytes) -> str:
    reader = PdfReader(io.BytesIO(pdf))
    assert len(reader.pages) == 1
    return " ".join(reader.pages[0].extract_text().split())


def placed_strings(pdf: bytes) -> list[tuple[str, float, float, float]]:
    """Every string the page draws upright: (text, x, y, right edge), the edge measured with
    the font it is set in."""
    page = PdfReader(io.BytesIO(pdf)).pages[0]
    found = []

    def visit(text, cm, tm, font, size):
        if not text.strip() or tm[1] or tm[2] or cm[1] or cm[2]:
            return  # empty, or the rotated VOID band (checked on its own)
        name = font["/BaseFont"].split("+")[-1].lstrip("/") if font else "Helvetica"
        x, y = tm[4] + cm[4], tm[5] + cm[5]
        found.append((text, x, y, x + stringWidth(text, name, size)))

    page.extract_text(visitor_text=visit)
    return found


def images(pdf: bytes) -> int:
    return len(PdfReader(io.BytesIO(pdf)).pages[0].images)


# --- item 9: a revoked ticket says VOID ---------------------------------------------------------


def test_a_valid_ticket_says_valid_once_and_carries_its_code(ticket):
    text = pdf_text(ticket_render.ticket_pdf(ticket))
    assert "It is valid once." in text and "VOID" not in text
    assert images(ticket_render.ticket_pdf(ticket)) == 1


def test_a_cancelled_bookings_pdf_says_void_before_and_after_the_revocation(ticket):
    cancel_confirmed(ticket.booking)
    ticket.refresh_from_db()
    ticket.booking.refresh_from_db()
    # The revocation is still in the outbox: the booking's state already makes it void.
    assert ticket.status == TicketStatus.VALID and is_void(ticket)
    before = ticket_render.ticket_pdf(ticket)
    relay()
    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.REVOKED
    for pdf in (before, ticket_render.ticket_pdf(ticket)):
        text = pdf_text(pdf)
        assert "VOID: this ticket was cancelled and admits no one." in text
        assert "valid once" not in text
        assert images(pdf) == 0  # no code left to copy


@pytest.mark.parametrize(
    ("language", "stamp", "phrase"),
    [("de", "UNGÜLTIG", "gültig"), ("ru", "НЕДЕЙСТВИТЕЛЕН", "действителен один раз")],
)
def test_the_void_stamp_is_in_the_readers_language(ticket, language, stamp, phrase):
    cancel_confirmed(ticket.booking)
    relay()
    ticket.refresh_from_db()
    with translation.override(language):
        text = pdf_text(ticket_render.ticket_pdf(ticket))
    assert stamp in text and "VOID" not in text
    assert phrase not in text.replace(stamp, "")


def test_the_booking_page_and_the_download_of_a_cancelled_booking_say_void(
    client, customer, ticket
):
    client.force_login(customer)
    page = client.get(reverse("bookings:detail", args=[ticket.booking_id])).content.decode()
    assert "data-live-code" in page and "VOID" not in page  # the control: a valid ticket
    cancel_confirmed(ticket.booking)
    relay()
    page = client.get(reverse("bookings:detail", args=[ticket.booking_id])).content.decode()
    assert "data-void" in page and "VOID: this ticket was cancelled and admits no one." in page
    assert "data-live-code" not in page and "ticket-png" not in page
    download = client.get(reverse("bookings:ticket-pdf", args=[ticket.booking_id, ticket.pk]))
    assert download.status_code == 200
    assert "VOID" in pdf_text(download.content)
    assert ticket.booking.__class__.objects.get(pk=ticket.booking_id).status == (
        BookingStatus.CANCELLED
    )


# --- item 10: headings wrap inside the page in every language -----------------------------------


def event_ticket(customer):
    from bookings.customer_holds import hold_seats
    from tests.bookings.confirming import confirm

    event = EventFactory(name="Eine sehr lange Nacht der Streichinstrumente und Stimmen 2026")
    booking = hold_seats(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=["1-1-1"],
        passenger_names=["Ana Lima"],
    )
    confirm(booking)
    relay()
    return Ticket.objects.get(booking=booking)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_line_of_the_boarding_pass_is_whole_and_inside_the_page(ticket, language):
    check_inside_the_page(ticket, language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_line_of_the_entry_ticket_is_whole_and_inside_the_page(customer, language):
    check_inside_the_page(event_ticket(customer), language)


def check_inside_the_page(ticket, language):
    with translation.override(language):
        face = ticket_render.catalogue.ticket_face(ticket)
        pdf = ticket_render.ticket_pdf(ticket)
    # Kept for reviewers beside the browser tests' screenshots (test-artifacts/, not committed).
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"ticket-{ticket.sale.kind.lower()}-{language}.pdf").write_bytes(pdf)
    text = pdf_text(pdf)
    # The whole heading is there (wrapped lines join with a space)...
    assert " ".join(f"Seatkeeper · {face.heading}".split()) in text
    assert " ".join(face.footer.split()) in text
    for label, _value in face.rows:
        assert " ".join(label.split()) in text, label
    # ...and every line drawn ends inside the page's margins.
    strings = placed_strings(pdf)
    assert strings
    for line, x, y, right in strings:
        assert x >= ticket_render.LEFT - 0.5, line
        assert right <= ticket_render.PAGE_WIDTH - ticket_render.MARGIN + 0.5, (line, right)
        assert 0 < y < ticket_render.PAGE_HEIGHT, line


def test_the_russian_heading_wraps_instead_of_running_off(ticket):
    """The control of the check above: the Russian heading is too wide for one line."""
    _, bold = ticket_render._fonts()
    with translation.override("ru"):
        heading = "Seatkeeper · " + ticket_render.catalogue.ticket_face(ticket).heading
        pdf = ticket_render.ticket_pdf(ticket)
    assert stringWidth(heading, bold, ticket_render.HEADING_SIZE) > ticket_render.TEXT_WIDTH
    heading_lines = [s for s in placed_strings(pdf) if re.search("талон|Seatkeeper", s[0])]
    assert len(heading_lines) >= 2
