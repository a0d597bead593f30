"""A ticket as a QR code (PNG, SVG) and as a PDF e-ticket / boarding pass carrying the QR."""

from __future__ import annotations

import functools
import io
from pathlib import Path
from zoneinfo import ZoneInfo

import qrcode
import qrcode.image.svg
from qrcode.constants import ERROR_CORRECT_M
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from bookings.models import Ticket

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


def ticket_pdf(ticket: Ticket) -> bytes:
    """A one-page boarding pass: who, which flight, when, which seat, and the QR code."""
    flight = ticket.flight
    origin, destination = flight.origin, flight.destination
    departure = flight.departure_at.astimezone(ZoneInfo(origin.time_zone))
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, pageCompression=0)
    pdf.setTitle(f"Boarding pass {flight.code} {ticket.seat_no or ''}".strip())
    width, height = A4
    top = height - 30 * mm
    regular, bold = _fonts()
    pdf.setFont(bold, 20)
    pdf.drawString(20 * mm, top, "Seatkeeper · E-ticket / Boarding pass")
    rows = [
        ("Passenger", ticket.passenger_name or "(name to be given at check-in)"),
        ("Flight", flight.code),
        ("From", f"{origin.code} {origin.city}"),
        ("To", f"{destination.code} {destination.city}"),
        ("Departure", departure.strftime("%Y-%m-%d %H:%M") + f" ({origin.time_zone})"),
        ("Seat", ticket.seat_no or "assigned at the gate"),
        ("Fare class", ticket.get_fare_class_display()),
        ("Booking", str(ticket.booking_id)),
        ("Ticket", ticket.serial),
    ]
    y = top - 15 * mm
    for label, value in rows:
        pdf.setFont(regular, 10)
        pdf.drawString(20 * mm, y, label)
        pdf.setFont(bold, 13)
        pdf.drawString(50 * mm, y, value)
        y -= 9 * mm
    size = 70 * mm
    pdf.drawImage(
        ImageReader(io.BytesIO(qr_png(ticket.code))),
        width - 20 * mm - size,
        top - 10 * mm - size,
        size,
        size,
    )
    pdf.setFont(regular, 8)
    pdf.drawString(20 * mm, y - 5 * mm, "Show this code at the gate. It is valid once.")
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()
