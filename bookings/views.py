"""Pages: ticket downloads for their owner (and staff), and the gate's scan page."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from bookings import selectors
from bookings.errors import DomainError
from bookings.models import Ticket
from bookings.ticket_render import qr_png, qr_svg, ticket_pdf
from bookings.tickets import scan_ticket


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous users go to the login page; signed-in non-staff get 403, not a login loop."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("Gate check-in is for staff.")
        return view(request, *args, **kwargs)

    return wrapper


def _ticket_or_404(request: HttpRequest, booking_id: int, ticket_id: int):
    try:
        return selectors.access_ticket(
            user=request.user, booking_id=booking_id, ticket_id=ticket_id
        )
    except DomainError as exc:
        raise Http404(exc.detail) from exc


def ticket_file(ticket: Ticket, kind: str) -> HttpResponse:
    """The ticket as a download: "png" / "svg" (the QR code) or "pdf" (the boarding pass).

    Shared by these pages and the REST API, so both hand out the same bytes and headers."""
    if kind == "png":
        body, content_type, name = qr_png(ticket.code), "image/png", f"ticket-{ticket.serial}.png"
    elif kind == "svg":
        body, content_type = qr_svg(ticket.code), "image/svg+xml"
        name = f"ticket-{ticket.serial}.svg"
    else:
        body, content_type = ticket_pdf(ticket), "application/pdf"
        name = f"boarding-pass-{ticket.flight.code}-{ticket.seat_no or ticket.serial}.pdf"
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


@require_http_methods(["GET", "POST"])
@staff_required
def checkin_scan(request: HttpRequest) -> HttpResponse:
    flights = list(selectors.gate_flights())
    context: dict = {"flights": flights, "flight_id": None, "result": None, "error": None}
    raw_flight = request.POST.get("flight") or request.GET.get("flight")
    if raw_flight:
        try:
            context["flight_id"] = int(raw_flight)
        except ValueError:
            context["error"] = "Choose the flight you are boarding."
    if request.method == "POST" and not context["error"]:
        code = request.POST.get("code", "").strip()
        if context["flight_id"] not in {f.pk for f in flights}:
            context["error"] = "Choose the flight you are boarding."
        elif not code:
            context["error"] = "Scan or type a ticket code."
        else:
            context["result"] = scan_ticket(
                code=code, flight_id=context["flight_id"], scanned_by=request.user
            )
    status = 400 if context["error"] else 200
    return render(request, "bookings/checkin.html", context, status=status)
