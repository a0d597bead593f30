"""The one front door of a hold taken from a page's form, for every catalogue's picker (a
flight's seat picker, an event's seats and standing areas): sign-in, the holds budget shared
with the API, the form, the waiting room, then the hold, once per drawing of the form.  Any
refusal goes back to the page the form was on with a message."""

from __future__ import annotations

import time
from collections.abc import Callable
from math import ceil
from typing import TypeVar

from django import forms
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _

from bookings.models import Booking
from bookings.seat_names import refusal_text
from kernel.errors import DomainError, IdempotencyKeyInFlight
from kernel.idempotency import clean_key, fingerprint, run_once
from kernel.web.forms import form_errors
from kernel.web.throttles import HoldsThrottle
from waitroom.errors import WaitingRoomRequired
from waitroom.gate import admitted_until, require_admission

# How long a second submission of the same form waits for the first to finish.
SAME_FORM_WAIT_SECONDS = 10

Item = TypeVar("Item")  # what the page sells from: a flight's id, an event
HoldOrder = tuple[dict, Callable[[], Booking]]  # what was asked (for the resubmit check), the hold


#: The names typed into a refused hold form, kept for the page it goes back to.
TYPED_NAMES = "hold_form_typed_names"


def show_domain_error(
    request: HttpRequest, error: DomainError, *, sale_id: int | None = None
) -> None:
    messages.error(request, refusal_text(error, sale_id=sale_id))


def keep_typed_names(request: HttpRequest) -> None:
    """A refusal must not cost the shopper the names they typed: the picker fills them in
    again once (`typed_names`)."""
    names = request.POST.getlist("names") or request.POST.getlist("name")
    request.session[TYPED_NAMES] = [str(n)[:120] for n in names[:20]]


def typed_names(request: HttpRequest) -> list[str]:
    """The names kept by the last refusal, once; [] if none."""
    return request.session.pop(TYPED_NAMES, []) if hasattr(request, "session") else []


def admission_state(request: HttpRequest, *, sale_id: int) -> tuple[str | None, object]:
    """(queue URL, None) when the shopper must queue before picking anything; (None, the end
    of their turn) once let in; (None, None) for a sale without a waiting room.  Pickers show
    the queue up front instead of refusing a form already filled in."""
    try:
        return None, admitted_until(request=request, customer_id=request.user.pk, sale_id=sale_id)
    except WaitingRoomRequired as error:
        return error.extra["queueUrl"], None


def hold_from_form(
    request: HttpRequest,
    *,
    back: str,
    find: Callable[[], Item],
    make_form: Callable[[Item], forms.Form],
    sale_id: Callable[[Item], int],
    order: Callable[[Item, forms.Form], HoldOrder | None],
) -> HttpResponse:
    """A hold form's submission, from sign-in to the hold page.  `find` looks up what is sold
    (after sign-in; it may raise Http404), `sale_id` names its sale for the waiting room (a
    domain error of it goes `back` with its message), and `order` turns the valid form into
    what was asked and the hold to run, or returns None after giving its own message."""
    if not request.user.is_authenticated:
        return redirect_to_login(back)
    item = find()
    if holds_throttled(request):
        return redirect(back)
    form = make_form(item)
    if not form.is_valid():
        messages.error(request, form_errors(form))
        keep_typed_names(request)
        return redirect(back)
    try:
        sold = sale_id(item)
        require_admission(request=request, customer_id=request.user.pk, sale_id=sold)
    except WaitingRoomRequired as error:
        show_domain_error(request, error)
        return redirect(error.extra["queueUrl"])
    except DomainError as error:  # no such sale
        show_domain_error(request, error)
        return redirect(back)
    ordered = order(item, form)
    if ordered is None:
        keep_typed_names(request)
        return redirect(back)
    asked, hold = ordered
    try:
        booking_id = hold_once(
            request,
            sale_id=sold,
            key=form.cleaned_data.get("idempotency_key"),
            asked=asked,
            hold=hold,
        )
    except DomainError as error:
        show_domain_error(request, error, sale_id=sold)
        keep_typed_names(request)
        return redirect(back)
    return redirect("bookings:detail", booking_id=booking_id)


def holds_throttled(request: HttpRequest) -> bool:
    """The same per-user budget as POST /api/bookings, for every picker page (flights,
    events): many doors, one limit.  True (with a message) when this hold must wait."""
    throttle = HoldsThrottle()
    if throttle.allow_request(request, None):
        return False
    messages.error(
        request,
        _("Too many holds in a short time. Please try again in %(seconds)d seconds.")
        % {"seconds": ceil(throttle.wait() or 1)},
    )
    return True


def hold_once(
    request: HttpRequest,
    *,
    sale_id: int,
    key: str | None,
    asked: dict,
    hold: Callable[[], Booking],
) -> int:
    """Run `hold` once per drawing of a hold form (every picker's page): a double click or a
    resubmit of the same drawing (same `key`, same `asked`) lands on the booking the first
    submission made.  Returns the booking's id; domain errors of `hold` are raised."""
    key = clean_key(key, required=False)
    if key is None:
        return hold().pk
    asked_fingerprint = fingerprint(asked)
    deadline = time.monotonic() + SAME_FORM_WAIT_SECONDS
    while True:
        try:
            result = run_once(
                sale_id=sale_id,
                customer=request.user,
                scope="page-hold",
                key=key,
                request_fingerprint=asked_fingerprint,
                write=hold,
                answer=lambda booking: (201, {"booking_id": booking.pk}),
            )
            return result.body["booking_id"]
        except IdempotencyKeyInFlight:
            # The first click is still holding: wait for it and show its booking.
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
