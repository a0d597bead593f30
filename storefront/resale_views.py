"""The booking page's resale buttons (issue 29, item 4): list the ticked tickets (or the only
one) for resale through the waitlist, or withdraw them.  Thin: a service call, a message,
back to the booking."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from bookings import resale
from kernel.errors import DomainError
from payments.resale import list_booking_for_resale
from storefront.hold_form import show_domain_error


@require_POST
@login_required
def resale_list(request: HttpRequest, booking_id: int) -> HttpResponse:
    try:
        listed = list_booking_for_resale(
            customer=request.user, booking_id=booking_id, ticket_ids=_ticked(request)
        )
    except DomainError as error:
        show_domain_error(request, error)
    else:
        messages.success(
            request,
            _(
                "Your tickets are offered to the waitlist. They stay yours until someone buys "
                "them; then you are refunded %(amount)s %(currency)s."
            )
            % {"amount": listed.face_value - listed.fee, "currency": listed.currency},
        )
    return redirect("bookings:detail", booking_id=booking_id)


def _ticked(request: HttpRequest) -> list[int] | None:
    """The tickets ticked on the page (None: the page offered no choice, so all of them).
    Nothing ticked, or a value that is no ticket id, is an empty choice the service refuses."""
    if "choose" not in request.POST:
        return None
    values = request.POST.getlist("tickets")
    if not all(v.isdigit() for v in values):
        return []
    return [int(v) for v in values]


@require_POST
@login_required
def resale_withdraw(request: HttpRequest, booking_id: int) -> HttpResponse:
    try:
        resale.withdraw_resale(customer=request.user, booking_id=booking_id)
    except DomainError as error:
        show_domain_error(request, error)
    else:
        messages.success(request, _("Resale withdrawn. Your tickets are yours to use."))
    return redirect("bookings:detail", booking_id=booking_id)
