"""Ticket downloads for their owner: the QR code (PNG, SVG) and the printable ticket (PDF).
`ticket_file` is shared with the REST API, so both hand out the same bytes and headers."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from bookings import catalogue, selectors
from bookings.models import Ticket
from kernel.errors import DomainError


def _ticket_or_404(request: HttpRequest, booking_id: int, ticket_id: int):
    try:
        return selectors.access_ticket(
            user=request.user, booking_id=booking_id, ticket_id=ticket_id
        )
    except DomainError as exc:
        raise Http404(exc.detail) from exc


def ticket_file(ticket: Ticket, kind: str) -> HttpResponse:
    """The ticket as a download: "png" / "svg" (the QR code) or "pdf" (the boarding pass, the
    entry ticket: named by its catalogue).

    Shared by these pages and the REST API, so both hand out the same bytes and headers."""
    from bookings.ticket_render import qr_png, qr_svg, ticket_pdf  # on first use: its docstring

    if kind == "png":
        body, content_type, name = qr_png(ticket.code), "image/png", f"ticket-{ticket.serial}.png"
    elif kind == "svg":
        body, content_type = qr_svg(ticket.code), "image/svg+xml"
        name = f"ticket-{ticket.serial}.svg"
    else:
        body, content_type = ticket_pdf(ticket), "application/pdf"
        name = f"{catalogue.ticket_face(ticket).file_stem}.pdf"
    response = HttpResponse(body, content_type=content_type)
    disposition = "attachment" if kind == "pdf" else "inline"
    response["Content-Disposition"] = f'{disposition}; filename="{name}"'
    # A ticket is a bearer credential: keep it out of shared caches.
    response["Cache-Control"] = "private, no-store"
    return response


@require_GET
@login_required
def ticket_qr_png(request: HttpRequest, booking_id: int, ticket_id: int) -> HttpResponse:
    return ticket_file(_ticket_or_404(request, booking_id, ticket_id), "png")


@require_GET
@login_required
def ticket_qr_svg(request: HttpRequest, booking_id: int, ticket_id: int) -> HttpResponse:
    return ticket_file(_ticket_or_404(request, booking_id, ticket_id), "svg")


@require_GET
@login_required
def ticket_pdf_download(request: HttpRequest, booking_id: int, ticket_id: int) -> HttpResponse:
    return ticket_file(_ticket_or_404(request, booking_id, ticket_id), "pdf")
