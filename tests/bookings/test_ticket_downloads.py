"""QR (PNG, SVG) and PDF tickets: they carry the signed code, and only the owner and staff
get them."""

import base64
import io
import re
import zlib
from datetime import timedelta

import pytest
import zxingcpp
from django.urls import reverse
from django.utils import timezone
from PIL import Image

from bookings.errors import BookingNotFound
from bookings.models import Ticket
from bookings.selectors import tickets_for_booking
from bookings.ticket_render import qr_svg
from kernel.outbox import relay_outbox
from tests.bookings.confirming import hold_and_confirm

pytestmark = pytest.mark.django_db


@pytest.fixture
def ticket(customer, flight):
    booking = hold_and_confirm(customer, flight, seats=["12A"], names=["Nguyễn Văn An"])
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    return Ticket.objects.get(booking=booking)


def urls(ticket):
    args = [ticket.booking_id, ticket.pk]
    return {kind: reverse(f"bookings:ticket-{kind}", args=args) for kind in ("png", "svg", "pdf")}


def decode_qr(png: bytes) -> str:
    results = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))
    assert len(results) == 1
    return results[0].text


def test_owner_downloads_a_qr_png_that_scans_to_the_signed_code(client, customer, ticket):
    client.force_login(customer)
    response = client.get(urls(ticket)["png"])
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response["Cache-Control"] == "private, no-store"
    assert decode_qr(response.content) == ticket.code


def test_owner_downloads_the_svg_qr(client, customer, ticket):
    client.force_login(customer)
    response = client.get(urls(ticket)["svg"])
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<?xml") and b"<svg" in response.content
    assert response.content == qr_svg(ticket.code)
    assert qr_svg(ticket.code) != qr_svg(ticket.code[:-1] + "x")  # the SVG depends on the code


def test_the_pdf_boarding_pass_carries_the_passenger_and_a_scannable_qr(client, customer, ticket):
    client.force_login(customer)
    response = client.get(urls(ticket)["pdf"])
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"].startswith("attachment;")
    pdf = response.content
    assert pdf.startswith(b"%PDF")
    assert f"Boarding pass {ticket.sale.flight.code} 12A".encode() in pdf
    # The embedded image is the QR: pull the raw image stream out and decode it.
    match = re.search(
        rb"<<[^>]*?/Height (\d+)[^>]*?/Subtype /Image[^>]*?/Width (\d+)[^>]*>>"
        rb"\s*stream\r?\n(.*?)endstream",
        pdf,
        re.S,
    )
    assert match, "no image in the PDF"
    height, width = int(match.group(1)), int(match.group(2))
    assert b"/ASCII85Decode /FlateDecode" in match.group(0)
    encoded = match.group(3).strip()
    raw = zlib.decompress(base64.a85decode(encoded.removesuffix(b"~>"), adobe=False))
    image = Image.frombytes("RGB", (width, height), raw)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    assert decode_qr(buffer.getvalue()) == ticket.code


def test_another_customer_gets_404_and_staff_gets_the_ticket(
    client, other_customer, staff_user, ticket
):
    client.force_login(other_customer)
    for url in urls(ticket).values():
        assert client.get(url).status_code == 404
    client.force_login(staff_user)
    for url in urls(ticket).values():
        assert client.get(url).status_code == 200


def test_a_ticket_under_the_wrong_booking_id_is_404(client, customer, ticket):
    client.force_login(customer)
    wrong = reverse("bookings:ticket-png", args=[ticket.booking_id + 1000, ticket.pk])
    assert client.get(wrong).status_code == 404


def test_anonymous_is_sent_to_login(client, ticket, settings):
    settings.LOGIN_URL = "/login/"
    response = client.get(urls(ticket)["pdf"])
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_tickets_for_booking_selector_checks_ownership(
    customer, other_customer, staff_user, ticket
):
    assert list(tickets_for_booking(booking_id=ticket.booking_id, user=customer)) == [ticket]
    assert list(tickets_for_booking(booking_id=ticket.booking_id, user=staff_user)) == [ticket]
    assert list(tickets_for_booking(booking_id=ticket.booking_id)) == [ticket]
    with pytest.raises(BookingNotFound):
        tickets_for_booking(booking_id=ticket.booking_id, user=other_customer)
