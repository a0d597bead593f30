"""GET /api/bookings/{id}/tickets and each ticket's QR (PNG, SVG) and PDF over the API."""

import io
from datetime import timedelta

import pytest
import zxingcpp
from django.utils import timezone
from PIL import Image

from bookings.customer_holds import hold_seats
from bookings.models import Ticket
from bookings.ticket_render import qr_svg
from kernel.outbox import relay_outbox
from tests.api.conftest import client_for, problem
from tests.bookings.confirming import cancel_confirmed, hold_and_confirm

pytestmark = pytest.mark.django_db


def issue(booking):
    relay_outbox(now=timezone.now() + timedelta(hours=1))  # the consumer that issues tickets
    return list(Ticket.objects.filter(booking=booking).order_by("id"))


@pytest.fixture
def booking(customer, flight):
    return hold_and_confirm(customer, flight, seats=["12A", "12B"], names=["Nguyễn Văn An", "Bo"])


def decode_qr(png: bytes) -> str:
    results = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))
    assert len(results) == 1
    return results[0].text


def test_list_shows_every_ticket_with_its_links(api, booking):
    tickets = issue(booking)
    response = api.get(f"/api/bookings/{booking.pk}/tickets")
    assert response.status_code == 200
    base = f"/api/bookings/{booking.pk}/tickets"
    assert response.json() == [
        {
            "ticketId": t.pk,
            "serial": t.serial,
            "passenger": name,
            "seat": seat,
            "fareClass": "ECONOMY",
            "place": f"seat {seat}",
            "fare": "Economy",
            "status": "VALID",
            "code": t.code,
            "issuedAt": t.issued_at.isoformat().replace("+00:00", "Z"),
            "links": {
                "qrPng": f"{base}/{t.pk}/qr.png",
                "qrSvg": f"{base}/{t.pk}/qr.svg",
                "pdf": f"{base}/{t.pk}/boarding-pass.pdf",
            },
        }
        for t, name, seat in zip(tickets, ["Nguyễn Văn An", "Bo"], ["12A", "12B"], strict=True)
    ]


def test_the_links_download_the_qr_and_the_pdf(api, booking):
    ticket = issue(booking)[0]
    links = api.get(f"/api/bookings/{booking.pk}/tickets").json()[0]["links"]

    png = api.get(links["qrPng"])
    assert png.status_code == 200 and png["Content-Type"] == "image/png"
    assert png["Cache-Control"] == "private, no-store"
    assert decode_qr(png.content) == ticket.code

    svg = api.get(links["qrSvg"])
    assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml"
    assert svg.content == qr_svg(ticket.code)

    pdf = api.get(links["pdf"])
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert pdf["Content-Disposition"].startswith("attachment;")
    assert pdf.content.startswith(b"%PDF")
    assert f"Boarding pass {ticket.sale.flight.code} 12A".encode() in pdf.content


def test_downloads_honour_an_accept_header_for_the_file_type(api, booking):
    ticket = issue(booking)[0]
    base = f"/api/bookings/{booking.pk}/tickets/{ticket.pk}"
    assert api.get(f"{base}/qr.png", HTTP_ACCEPT="image/png").status_code == 200
    assert api.get(f"{base}/boarding-pass.pdf", HTTP_ACCEPT="application/pdf").status_code == 200
    # Errors are still problem+json, whatever was asked for.
    problem(api.get(f"{base}9/qr.png", HTTP_ACCEPT="image/png"), 404)


def test_a_hold_has_no_tickets_yet(api, customer, flight):
    held = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20A"]
    )
    response = api.get(f"/api/bookings/{held.pk}/tickets")
    assert response.status_code == 200 and response.json() == []


def test_revoked_tickets_are_listed_as_revoked(api, booking):
    issue(booking)
    cancel_confirmed(booking)
    issue(booking)  # the booking.cancelled consumer revokes them
    statuses = [t["status"] for t in api.get(f"/api/bookings/{booking.pk}/tickets").json()]
    assert statuses == ["REVOKED", "REVOKED"]


def test_other_customers_get_404_everywhere(other_customer, booking):
    ticket = issue(booking)[0]
    client = client_for(other_customer)
    base = f"/api/bookings/{booking.pk}/tickets"
    problem(client.get(base), 404)
    for path in ("qr.png", "qr.svg", "boarding-pass.pdf"):
        assert problem(client.get(f"{base}/{ticket.pk}/{path}"), 404)["type"].endswith(
            "/ticket-not-found"
        )


def test_a_ticket_under_another_booking_id_is_404(api, customer, flight, booking):
    ticket = issue(booking)[0]
    mine_too = hold_and_confirm(customer, flight, seats=["20A"], names=["X"])
    problem(api.get(f"/api/bookings/{mine_too.pk}/tickets/{ticket.pk}/qr.png"), 404)
    problem(api.get("/api/bookings/987654321/tickets"), 404)
