"""The customer's online check-in page (not the gate's boarding scan, which is /checkin/):
thin, read the booking's state and call `flights.online_checkin.check_in_online`."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _

from bookings.live import current_version
from flights import cabin_map
from flights.checkin_selectors import check_in_page_state
from flights.online_checkin import check_in_online
from kernel.errors import DomainError
from storefront.hold_form import show_domain_error


@login_required
def online_check_in(request: HttpRequest, booking_id: int) -> HttpResponse:
    state = check_in_page_state(customer=request.user, booking_id=booking_id, now=timezone.now())
    if state is None:
        raise Http404(_("No flight booking of yours with that number."))
    if request.method == "POST":
        choices = {}
        for passenger in state.passengers:
            seat_no = request.POST.get(f"seat_{passenger.pk}", "").strip().upper()
            if seat_no and seat_no != (passenger.seat.seat_no if passenger.seat else ""):
                choices[passenger.pk] = seat_no
        try:
            check_in_online(
                customer=request.user,
                booking_id=booking_id,
                seat_choices=choices,
                exit_row_confirmed=request.POST.get("exit_row_confirmed") == "on",
                reduced_mobility_ids={
                    p.pk for p in state.passengers if request.POST.get(f"assistance_{p.pk}") == "on"
                },
            )
        except DomainError as error:
            show_domain_error(request, error)
            return redirect("flights:online_check_in", booking_id=booking_id)
        messages.success(request, _("You are checked in. Your seats are on your tickets."))
        return redirect("flights:online_check_in", booking_id=booking_id)
    version = current_version(state.flight.sale_id)
    left_letters, right_letters, rows = cabin_map.cabin_rows(
        flight_id=state.flight.pk, fare_class=state.booking.fare_class
    )
    return render(
        request,
        "flights/online_checkin.html",
        {
            "state": state,
            "flight": state.flight,
            "booking": state.booking,
            "version": version,
            "left_letters": left_letters,
            "right_letters": right_letters,
            "rows": rows,
            "free_seats": [
                (cell, row.is_exit)
                for row in rows
                for cell in (*row.left, *row.right)
                if cell and cell.in_fare and cell.is_free
            ],
            "has_exit_rows": any(row.is_exit for row in rows),
            "needs_assistance": {pk for pk, c in state.checked_in.items() if c.reduced_mobility},
        },
    )
