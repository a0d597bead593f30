"""The customer answers a volunteer offer on their booking page: thin, call
`flights.denied_boarding.answer_offer`."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from flights.denied_boarding import answer_offer
from flights.eu261 import Remedy
from flights.models import OfferStatus, PayoutMethod
from kernel.errors import DomainError
from storefront.hold_form import show_domain_error


@require_POST
@login_required
def volunteer_answer(request: HttpRequest, booking_id: int, offer_id: int) -> HttpResponse:
    answer = request.POST.get("answer")
    remedy = request.POST.get("remedy", Remedy.REROUTING)
    method = request.POST.get("method", PayoutMethod.CASH)
    if (
        answer not in ("accept", "decline")
        or remedy not in Remedy.values
        or method not in (PayoutMethod.values)
    ):
        messages.error(request, _("Please choose accept or decline, and how to be compensated."))
        return redirect("bookings:detail", booking_id=booking_id)
    try:
        offer = answer_offer(
            customer=request.user,
            offer_id=offer_id,
            booking_id=booking_id,
            accept=answer == "accept",
            remedy=Remedy(remedy),
            method=PayoutMethod(method),
            voucher_agreed=request.POST.get("voucher_agreed") == "on",
        )
    except DomainError as error:
        show_domain_error(request, error)
    else:
        messages.success(
            request,
            {
                OfferStatus.ACCEPTED: _("Thank you: you gave up the seat. Details below."),
                OfferStatus.DECLINED: _("You declined the offer: you keep your seat."),
                OfferStatus.WITHDRAWN: _(
                    "Enough passengers volunteered already: you keep your seat."
                ),
            }[offer.status],
        )
    return redirect("bookings:detail", booking_id=booking_id)
