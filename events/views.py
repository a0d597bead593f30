"""Customer pages for finding an event and buying tickets: the list, the event with its seat
picker, holds of seats and standing places, and the waitlist of a sold-out class.  Thin:
every write is a service of the sale engine (holds) or the waitlist, and every domain error
becomes a message on the event's page."""

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from bookings import best_available, customer_holds, waitlist, waitlist_selectors
from events import picker, selectors
from events.forms import (
    BestAvailableForm,
    EventSearchForm,
    SeatHoldForm,
    StandingHoldForm,
    WaitlistForm,
)
from events.models import Event, EventStatus
from events.plan_drawing import presale_drawing
from kernel.errors import DomainError
from kernel.web.forms import form_errors, labelled_form_errors
from storefront.hold_form import (
    HoldOrder,
    admission_state,
    hold_from_form,
    show_domain_error,
    typed_names,
)


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
    queue_url, turn_ends_at = _admission(request, row)
    buying = None
    if event["sale_open"] and not queue_url:
        buying = picker.seat_picker(event=row)
    best_categories = picker.seated_categories(event=row) if buying else []
    return render(
        request,
        "events/detail.html",
        {
            "event": event,
            # The drawing without availability while the sale is not open.
            "plan": None if buying else presale_drawing(event=row),
            "picker": buying,
            "best_categories": best_categories,
            "queue_url": queue_url,
            "turn_ends_at": turn_ends_at,
            "now": timezone.now(),
            "typed_name": next(iter(typed_names(request)), ""),
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


def _admission(request: HttpRequest, event: Event) -> tuple[str | None, object]:
    """The waiting room's page when the event's sale is behind one and this customer has not
    been let in (the page then sends them there instead of drawing the seat map), or the end
    of their turn once let in; (None, None) for a sale without a waiting room."""
    if event.sale_id is None or event.status != EventStatus.ON_SALE:
        return None, None
    return admission_state(request, sale_id=event.sale_id)


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
        return asked, lambda: customer_holds.hold_seats(
            customer=request.user,
            sale_id=event.sale_id,
            fare_class=category,
            seat_numbers=seats,
            passenger_names=[name] * len(seats),
        )

    return hold_from_form(
        request,
        back=reverse("events:detail", args=[event_id]),
        find=lambda: _sold_event(event_id),
        make_form=lambda event: SeatHoldForm(request.POST),
        sale_id=lambda event: event.sale_id,
        order=order,
    )


@require_POST
def hold_best_available(request: HttpRequest, event_id: int) -> HttpResponse:
    """Best available: the engine picks the best seats side by side (issue 29)."""

    def order(event: Event, form: BestAvailableForm) -> HoldOrder:
        category, quantity, accessible, name = (
            form.cleaned_data[k] for k in ("category", "quantity", "accessible", "name")
        )
        asked = {"event": event.pk, "best": category, "quantity": quantity, "a": accessible}
        return asked, lambda: best_available.hold_best_available(
            customer=request.user,
            sale_id=event.sale_id,
            fare_class=category,
            quantity=quantity,
            accessible=accessible,
            passenger_names=[name] * quantity,
        )

    return hold_from_form(
        request,
        back=reverse("events:detail", args=[event_id]),
        find=lambda: _sold_event(event_id),
        make_form=lambda event: BestAvailableForm(
            request.POST, categories=picker.seated_categories(event=event)
        ),
        sale_id=lambda event: event.sale_id,
        order=order,
    )


@require_POST
def hold_standing(request: HttpRequest, event_id: int) -> HttpResponse:
    """A standing area's form: hold a number of places, sold by count."""

    def order(event: Event, form: StandingHoldForm) -> HoldOrder:
        area, quantity, name = (form.cleaned_data[k] for k in ("area", "quantity", "name"))
        asked = {"event": event.pk, "area": area, "quantity": quantity, "name": name}
        return asked, lambda: customer_holds.hold_seatless(
            customer=request.user,
            sale_id=event.sale_id,
            fare_class=area,
            passengers=quantity,
            passenger_names=[name] * quantity,
        )

    return hold_from_form(
        request,
        back=reverse("events:detail", args=[event_id]),
        find=lambda: _sold_event(event_id),
        make_form=lambda event: StandingHoldForm(
            request.POST, areas=picker.standing_classes(event=event)
        ),
        sale_id=lambda event: event.sale_id,
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
            sections=form.cleaned_data["sections"],
            max_seat_price=form.cleaned_data["max_seat_price"],
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
