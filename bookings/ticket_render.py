"""A ticket as a QR code (PNG, SVG) and as a one-page PDF carrying the QR: the words are the
catalogue's (`bookings.catalogue.ticket_face`: a boarding pass, an entry ticket), the layout
is the same for every ticket."""

from __future__ import annotations

import functools
import io
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import qrcode
import qrcode.image.svg
from django.utils.translation import gettext
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


def static_code_caption() -> str:
    return gettext("Static code — for print")


def local_label(moment: datetime, zone: str) -> str:
    """`moment` as printed on a ticket: day and time as the reader's language writes them, in
    the place's own zone (the airport's, the venue's), with the zone's name."""
    local = moment.astimezone(ZoneInfo(zone))
    return f"{format_when(local)} {local.tzname()}"


def ticket_rows(ticket: Ticket) -> list[tuple[str, str]]:
    """What the ticket says, label by label, in the words of the catalogue that sold it."""
    return catalogue.ticket_face(ticket).rows


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


def ticket_layout(ticket: Ticket) -> list[tuple[str, list[str]]]:
    """Each value split into lines that fit beside the QR code (nothing runs into it)."""
    return _layout(ticket_rows(ticket))


def _layout(rows: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    _, bold = _fonts()
    return [(label, _wrap(value, bold)) for label, value in rows]


def ticket_pdf(ticket: Ticket) -> bytes:
    """A one-page ticket (a boarding pass, an entry ticket): who, what, when, which seat, and
    the QR code."""
    face = catalogue.ticket_face(ticket)
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, pageCompression=0)
    pdf.setTitle(face.title)
    top = PAGE_HEIGHT - 30 * mm
    regular, bold = _fonts()
    pdf.setFont(bold, 20)
    pdf.drawString(LEFT, top, "Seatkeeper · " + face.heading)
    y = top - 15 * mm
    for label, lines in _layout(face.rows):
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
    # Paper cannot rotate: say so under the code (the ticket page shows the live one).
    pdf.setFont(regular, 8)
    pdf.drawCentredString(
        PAGE_WIDTH - MARGIN - QR_SIZE / 2, top - 14 * mm - QR_SIZE, static_code_caption()
    )
    pdf.setFont(regular, 8)
    pdf.drawString(LEFT, y - 5 * mm, face.footer)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()
