"""A ticket as a QR code (PNG, SVG) and as a PDF e-ticket / boarding pass carrying the QR."""

from __future__ import annotations

import functools
import io
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import qrcode
import qrcode.image.svg
from django.conf import settings
from django.utils.translation import gettext as _
from qrcode.constants import ERROR_CORRECT_M
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.lib.utils import ImageReader, simpleSplit
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from bookings import catalogue
from bookings.models import Ticket
from languages.formatting import format_when

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


@functools.cache
def _fonts() -> tuple[str, str]:
    # Helvetica only covers Latin-1; passenger names (Nguyễn, Łukasz) need a Unicode font
    # when the system has one.
    regular, bold = DEJAVU / "DejaVuSans.ttf", DEJAVU / "DejaVuSans-Bold.ttf"
    if regular.exists() and bold.exists():
        pdfmetrics.registerFont(TTFont("DejaVuSans", str(regular)))
        pdfmetrics.registerFont(TTFont("DejaVuSans-Bold", str(bold)))
        return "DejaVuSans", "DejaVuSans-Bold"
    return "Helvetica", "Helvetica-Bold"


def _qr(code: str) -> qrcode.QRCode:
    qr = qrcode.QRCode(error_correction=ERROR_CORRECT_M, box_size=8, border=4)
    qr.add_data(code)
    qr.make(fit=True)
    return qr


def qr_png(code: str) -> bytes:
    buffer = io.BytesIO()
    _qr(code).make_image().save(buffer, format="PNG")
    return buffer.getvalue()


def qr_svg(code: str) -> bytes:
    buffer = io.BytesIO()
    _qr(code).make_image(image_factory=qrcode.image.svg.SvgPathImage).save(buffer)
    return buffer.getvalue()


def boarding_minutes() -> int:
    return int(getattr(settings, "BOARDING_MINUTES_BEFORE_DEPARTURE", 30))


def _local(moment, zone: str) -> str:
    local = moment.astimezone(ZoneInfo(zone))
    # Day and time as the reader's language writes them; the zone is the airport's.
    return f"{format_when(local)} {local.tzname()}"


def boarding_pass_rows(ticket: Ticket) -> list[tuple[str, str]]:
    """What the pass says, label by label; every time local at its airport, with its zone."""
    flight = ticket.sale.flight
    origin, destination = flight.origin, flight.destination
    boarding = flight.departure_at - timedelta(minutes=boarding_minutes())
    return [
        (_("Passenger"), ticket.passenger_name or _("Name missing: see the check-in desk")),
        (_("Flight"), flight.code),
        (_("From"), f"{origin.code} {origin.city}"),
        (_("To"), f"{destination.code} {destination.city}"),
        (_("Departure"), _local(flight.departure_at, origin.time_zone)),
        (_("Arrival"), _local(flight.arrival_at, destination.time_zone)),
        (_("Boarding"), _local(boarding, origin.time_zone)),
        (_("Gate"), flight.gate or _("see screens")),
        (_("Seat"), ticket.seat_no or _("assigned at the gate")),
        (_("Fare class"), str(catalogue.class_label(ticket.fare_class))),
        (_("Booking"), str(ticket.booking_id)),
        (_("Ticket"), ticket.serial),
    ]


# Layout (A4, points): labels at LEFT, values from VALUE_X up to the QR code's left edge.
PAGE_WIDTH, PAGE_HEIGHT = A4
LEFT, VALUE_X, QR_SIZE, MARGIN, GAP = 20 * mm, 48 * mm, 60 * mm, 20 * mm, 6 * mm
VALUE_WIDTH = PAGE_WIDTH - MARGIN - QR_SIZE - GAP - VALUE_X
VALUE_SIZE = 12


def _wrap(text: str, font: str) -> list[str]:
    """Lines of `text` at most VALUE_WIDTH wide: at spaces, and inside a word too long alone."""
    lines = []
    for line in simpleSplit(text, font, VALUE_SIZE, VALUE_WIDTH) or [""]:
        while stringWidth(line, font, VALUE_SIZE) > VALUE_WIDTH:
            cut = len(line) - 1
            while cut > 1 and stringWidth(line[:cut], font, VALUE_SIZE) > VALUE_WIDTH:
                cut -= 1
            lines.append(line[:cut])
            line = line[cut:]
        lines.append(line)
    return lines


def boarding_pass_layout(ticket: Ticket) -> list[tuple[str, list[str]]]:
    """Each value split into lines that fit beside the QR code (nothing runs into it)."""
    _, bold = _fonts()
    return [(label, _wrap(value, bold)) for label, value in boarding_pass_rows(ticket)]


def ticket_pdf(ticket: Ticket) -> bytes:
    """A one-page boarding pass: who, which flight, when, which seat, and the QR code."""
    flight = ticket.sale.flight
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, pageCompression=0)
    title = _("Boarding pass")
    pdf.setTitle(f"{title} {flight.code} {ticket.seat_no or ''}".strip())
    top = PAGE_HEIGHT - 30 * mm
    regular, bold = _fonts()
    pdf.setFont(bold, 20)
    pdf.drawString(LEFT, top, "Seatkeeper · " + _("E-ticket / Boarding pass"))
    y = top - 15 * mm
    for label, lines in boarding_pass_layout(ticket):
        pdf.setFont(regular, 10)
        pdf.drawString(LEFT, y, label)
        pdf.setFont(bold, VALUE_SIZE)
        for line in lines:
            pdf.drawString(VALUE_X, y, line)
            y -= 5.5 * mm
        y -= 3 * mm
    pdf.drawImage(
        ImageReader(io.BytesIO(qr_png(ticket.code))),
        PAGE_WIDTH - MARGIN - QR_SIZE,
        top - 10 * mm - QR_SIZE,
        QR_SIZE,
        QR_SIZE,
    )
    pdf.setFont(regular, 8)
    pdf.drawString(LEFT, y - 5 * mm, _("Show this code at the gate. It is valid once."))
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()
