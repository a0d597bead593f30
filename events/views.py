"""Customer pages for finding an event and buying tickets: the list, the event with its seat
picker, holds of seats and standing places, and the waitlist of a sold-out class.  Thin:
every write is a service of the sale engine (holds) or the waitlist, and every domain error
becomes a message on the event's page."""

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from bookings import services, waitlist, waitlist_selectors
from bookings.models import Booking
from events import picker, selectors
from events.forms import EventSearchForm, SeatHoldForm, StandingHoldForm, WaitlistForm
from events.models import Event, EventStatus
from kernel.errors import DomainError
from kernel.web.forms import form_errors, labelled_form_errors
from storefront.views import hold_once, holds_throttled, show_domain_error
from waitroom.errors import WaitingRoomRequired
from waitroom.gate import require_admission


@require_GET
def event_list(request: HttpRequest) -> HttpResponse:
    form = EventSearchForm(request.GET or None)
    filters = {}
    if form.is_bound and not form.is_valid():
        messages.error(
            request, gettext("Please correct the search.") + " " + labelled_form_errors(form)
        )
        events = []
    else:
        if form.is_bound:
            data = form.cleaned_data
            filters = {"city": data["city"], "day": data["date"], "category": data["category"]}
        events = selectors.search_events(**filters)
    return render(
        request,
        "events/list.html",
        {"form": form, "events": events, "filtered": any(filters.values())},
    )


@require_GET
def event_detail(request: HttpRequest, event_id: int) -> HttpResponse:
    event = selectors.event_detail(event_id=event_id)
    if event is None:
        raise Http404(gettext("No such event."))
    row = get_object_or_404(Event.objects.select_related("venue"), pk=event_id)
    queue_url = _queue_url(request, row)
    buying = None
    if event["sale_open"] and not queue_url:
        buying = picker.seat_picker(event=row)
    return render(
        request,
        "events/detail.html",
        {
            "event": event,
            # The drawing without availability while the sale is not open.
            "plan": None if buying else selectors.seat_plan(event=row),
            "picker": buying,
            "queue_url": queue_url,
        },
    )


# --- buying: hold seats or standing places, join a waitlist ------------------------------------


def _sold_event(event_id: int) -> Event:
    """An event whose sale the engine runs (published once, so it has one), or 404."""
    return get_object_or_404(
        Event.objects.select_related("venue").exclude(status=EventStatus.DRAFT),
        pk=event_id,
        sale__isnull=False,
    )


def _queue_url(request: HttpRequest, event: Event) -> str | None:
    """The waiting room's page when the event's sale is behind one and this customer has not
    been let in (no live admission token): the page then sends them there instead of drawing
    the seat map.  None for a sale without a waiting room, or a shopper admitted."""
    if event.sale_id is None or event.status != EventStatus.ON_SALE:
        return None
    try:
        require_admission(request=request, customer_id=request.user.pk, sale_id=event.sale_id)
    except WaitingRoomRequired as error:
        return error.extra["queueUrl"]
    return None


def _gate(request: HttpRequest, event: Event) -> HttpResponse | None:
    """The waiting room in front of a protected sale: None to go on, else where to go."""
    try:
        require_admission(request=request, customer_id=request.user.pk, sale_id=event.sale_id)
    except WaitingRoomRequired as error:
        show_domain_error(request, error)
        return redirect(error.extra["queueUrl"])
    return None


HoldOrder = tuple[dict, Callable[[], Booking]]  # what was asked (for the resubmit check), the hold


def _hold_from_form(
    request: HttpRequest,
    event_id: int,
    *,
    make_form: Callable[[Event], forms.Form],
    order: Callable[[Event, forms.Form], HoldOrder | None],
) -> HttpResponse:
    """Both hold forms of the event page: sign-in, the holds budget shared with every picker,
    the form, the waiting room, then the hold, once per drawing of the form.  Any refusal goes
    back to the event page with a message; `order` returns None after giving its own."""
    back = reverse("events:detail", args=[event_id])
    if not request.user.is_authenticated:
        return redirect_to_login(back)
    event = _sold_event(event_id)
    if holds_throttled(request):
        return redirect(back)
    form = make_form(event)
    if not form.is_valid():
        messages.error(request, form_errors(form))
        return redirect(back)
    gate = _gate(request, event)
    if gate:
        return gate
    ordered = order(event, form)
    if ordered is None:
        return redirect(back)
    asked, hold = ordered
    try:
        booking_id = hold_once(
            request, key=form.cleaned_data["idempotency_key"], asked=asked, hold=hold
        )
    except DomainError as error:
        show_domain_error(request, error)
        return redirect(back)
    return redirect("bookings:detail", booking_id=booking_id)


@require_POST
def hold_seats(request: HttpRequest, event_id: int) -> HttpResponse:
    """The picker's form: hold the picked seats (one price category) for the customer."""

    def order(event: Event, form: SeatHoldForm) -> HoldOrder | None:
        seats, name = form.seats, form.cleaned_data["name"]
        category = form.cleaned_data["category"] or picker.category_of_seats(
            event=event, seat_numbers=seats
        )
        if category is None:
            messages.error(
                request,
                gettext(
                    "One booking holds seats of one price category: hold the seats of each "
                    "category separately."
                ),
            )
            return None
        asked = {"event": event.pk, "category": category, "seats": seats, "name": name}
        return asked, lambda: services.hold_seats(
            customer=request.user,
            sale_id=event.sale_id,
            fare_class=category,
            seat_numbers=seats,
            passenger_names=[name] * len(seats),
        )

    return _hold_from_form(
        request, event_id, make_form=lambda event: SeatHoldForm(request.POST), order=order
    )


@require_POST
def hold_standing(request: HttpRequest, event_id: int) -> HttpResponse:
    """A standing area's form: hold a number of places, sold by count."""

    def order(event: Event, form: StandingHoldForm) -> HoldOrder:
        area, quantity, name = (form.cleaned_data[k] for k in ("area", "quantity", "name"))
        asked = {"event": event.pk, "area": area, "quantity": quantity, "name": name}
        return asked, lambda: services.hold_seatless(
            customer=request.user,
            sale_id=event.sale_id,
            fare_class=area,
            passengers=quantity,
            passenger_names=[name] * quantity,
        )

    return _hold_from_form(
        request,
        event_id,
        make_form=lambda event: StandingHoldForm(
            request.POST, areas=picker.standing_classes(event=event)
        ),
        order=order,
    )


@require_POST
def waitlist_join(request: HttpRequest, event_id: int) -> HttpResponse:
    back = reverse("events:detail", args=[event_id])
    if not request.user.is_authenticated:
        return redirect_to_login(back)
    event = _sold_event(event_id)
    form = WaitlistForm(request.POST, classes=picker.class_codes(event=event))
    if not form.is_valid():
        messages.error(request, gettext("Could not join the waitlist.") + " " + form_errors(form))
        return redirect(back)
    try:
        entry = waitlist.join_waitlist(
            customer=request.user,
            sale_id=event.sale_id,
            fare_class=form.cleaned_data["fare_class"],
            party_size=form.cleaned_data["party_size"],
        )
    except DomainError as error:
        show_domain_error(request, error)
        return redirect(back)
    messages.success(
        request,
        gettext(
            "You are number %(position)d on the waitlist. When tickets free up we hold them "
            "for you and tell you by e-mail."
        )
        % {"position": waitlist_selectors.waitlist_position(entry=entry)},
    )
    return redirect(reverse("bookings:mine") + "#waitlist")


@require_POST
def waitlist_leave(request: HttpRequest, event_id: int) -> HttpResponse:
    mine = reverse("bookings:mine")
    if not request.user.is_authenticated:
        return redirect_to_login(mine)
    event = _sold_event(event_id)
    form = WaitlistForm(request.POST, classes=picker.class_codes(event=event), leaving=True)
    if not form.is_valid():
        messages.error(request, gettext("Could not leave the waitlist.") + " " + form_errors(form))
        return redirect(mine)
    try:
        waitlist.leave_waitlist(
            customer=request.user, sale_id=event.sale_id, fare_class=form.cleaned_data["fare_class"]
        )
    except DomainError as error:
        show_domain_error(request, error)
    else:
        messages.success(request, gettext("You have left the waitlist."))
    return redirect(mine + "#waitlist")


@never_cache
@require_GET
def seat_map_snapshot(request: HttpRequest, event_id: int) -> JsonResponse:
    return JsonResponse(picker.seat_map_snapshot(event=_sold_event(event_id)))
