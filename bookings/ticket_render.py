"""A ticket as a QR code (PNG, SVG) and as a one-page PDF carrying the QR: the words are the
catalogue's (`bookings.catalogue.ticket_face`: a boarding pass, an entry ticket), the layout
is the same for every ticket.

Imported where a file is made (storefront.ticket_views, the ticket tasks), not at a web
process's start: qrcode, Pillow and ReportLab are ~10 MB of RSS that a process serving
holds and seat maps never uses (issue 26; tests/project/test_web_imports.py)."""

from __future__ import annotations

import functools
import io
from pathlib import Path

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
from bookings.tickets import is_void

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


def ticket_rows(ticket: Ticket) -> list[tuple[str, str]]:
    """What the ticket says, label by label, in the words of the catalogue that sold it."""
    return catalogue.ticket_face(ticket).rows


# Layout (A4, points): labels at LEFT (wrapped to LABEL_WIDTH), values from VALUE_X up to the
# QR code's left edge; the heading and the footer span the page between the margins.
PAGE_WIDTH, PAGE_HEIGHT = A4
LEFT, VALUE_X, QR_SIZE, MARGIN, GAP = 20 * mm, 48 * mm, 60 * mm, 20 * mm, 6 * mm
VALUE_WIDTH = PAGE_WIDTH - MARGIN - QR_SIZE - GAP - VALUE_X
LABEL_WIDTH = VALUE_X - LEFT - 2 * mm
TEXT_WIDTH = PAGE_WIDTH - LEFT - MARGIN
VALUE_SIZE, LABEL_SIZE, HEADING_SIZE, FOOTER_SIZE = 12, 10, 20, 9
LINE = 5.5 * mm


def _wrap(text: str, font: str, size: float = VALUE_SIZE, width: float = VALUE_WIDTH) -> list[str]:
    """Lines of `text` at most `width` wide: at spaces, and inside a word too long alone."""
    lines = []
    for line in simpleSplit(text, font, size, width) or [""]:
        while stringWidth(line, font, size) > width:
            cut = len(line) - 1
            while cut > 1 and stringWidth(line[:cut], font, size) > width:
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


def _fit_label(label: str, font: str) -> tuple[float, list[str]]:
    """A label in the column left of the values: wrapped at spaces, in a smaller type if one
    word is too wide ("Бронирование"); cut inside a word only when even that fails."""
    for size in (LABEL_SIZE, 9, 8, 7):
        lines = simpleSplit(label, font, size, LABEL_WIDTH) or [""]
        if all(stringWidth(line, font, size) <= LABEL_WIDTH for line in lines):
            return size, lines
    return 7, _wrap(label, font, 7, LABEL_WIDTH)


def void_words() -> tuple[str, str]:
    """(the stamp, the sentence) a revoked ticket carries instead of "valid once"."""
    return (
        gettext("VOID"),
        gettext("VOID: this ticket was cancelled and admits no one."),
    )


def ticket_pdf(ticket: Ticket) -> bytes:
    """A one-page ticket (a boarding pass, an entry ticket): who, what, when, which seat, and
    the QR code.  A void ticket (bookings.tickets.is_void) is stamped VOID and has no code."""
    face = catalogue.ticket_face(ticket)
    void = is_void(ticket)
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, pageCompression=0)
    pdf.setTitle(f"{void_words()[0]} · {face.title}" if void else face.title)
    regular, bold = _fonts()
    # Long headings ("Электронный билет / посадочный талон") wrap instead of running off.
    y = PAGE_HEIGHT - 30 * mm
    pdf.setFont(bold, HEADING_SIZE)
    for line in _wrap("Seatkeeper · " + face.heading, bold, HEADING_SIZE, TEXT_WIDTH):
        pdf.drawString(LEFT, y, line)
        y -= 8 * mm
    top = y + 8 * mm
    y = top - 15 * mm
    for label, lines in _layout(face.rows):
        label_size, label_lines = _fit_label(label, regular)
        pdf.setFont(regular, label_size)
        for n, label_line in enumerate(label_lines):
            pdf.drawString(LEFT, y - n * 4 * mm, label_line)
        pdf.setFont(bold, VALUE_SIZE)
        for line in lines:
            pdf.drawString(VALUE_X, y, line)
            y -= LINE
        y -= max(0, (len(label_lines) - len(lines)) * 4 * mm) + 3 * mm
    code_box = (PAGE_WIDTH - MARGIN - QR_SIZE, top - 10 * mm - QR_SIZE)
    if void:
        _stamp_void(pdf, code_box)
        footer = void_words()[1]
    else:
        _draw_code(pdf, ticket, code_box)
        footer = face.footer
    pdf.setFont(regular, FOOTER_SIZE)
    for line in _wrap(footer, regular, FOOTER_SIZE, TEXT_WIDTH):
        pdf.drawString(LEFT, y - 5 * mm, line)
        y -= 4.5 * mm
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def _draw_code(pdf: canvas.Canvas, ticket: Ticket, box: tuple[float, float]) -> None:
    regular, _ = _fonts()
    x, y = box
    pdf.drawImage(ImageReader(io.BytesIO(qr_png(ticket.code))), x, y, QR_SIZE, QR_SIZE)
    # Paper cannot rotate: say so under the code (the ticket page shows the live one).
    pdf.setFont(regular, 8)
    pdf.drawCentredString(x + QR_SIZE / 2, y - 4 * mm, static_code_caption())


def _stamp_void(pdf: canvas.Canvas, box: tuple[float, float]) -> None:
    """Where the code was: a red box saying VOID (no code to copy), and a band across the
    page, so a print of it is refused at a glance too."""
    _, bold = _fonts()
    stamp = void_words()[0]
    x, y = box
    pdf.setStrokeColorRGB(0.7, 0, 0)
    pdf.setFillColorRGB(0.7, 0, 0)
    pdf.setLineWidth(3)
    pdf.rect(x, y, QR_SIZE, QR_SIZE)
    size = 28
    while size > 10 and stringWidth(stamp, bold, size) > QR_SIZE - 6 * mm:
        size -= 1
    pdf.setFont(bold, size)
    pdf.drawCentredString(x + QR_SIZE / 2, y + QR_SIZE / 2 - size / 3, stamp)
    pdf.saveState()
    pdf.setFillColorRGB(0.85, 0.1, 0.1, alpha=0.25)
    pdf.translate(PAGE_WIDTH / 2, PAGE_HEIGHT / 2)
    pdf.rotate(35)
    size = 90
    while size > 20 and stringWidth(stamp, bold, size) > PAGE_WIDTH * 0.8:
        size -= 2
    pdf.setFont(bold, size)
    pdf.drawCentredString(0, 0, stamp)
    pdf.restoreState()
    pdf.setFillColorRGB(0, 0, 0)
