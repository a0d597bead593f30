"""Customer pages for finding a flight and picking seats.  Reads only; holds are in bookings."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from bookings.live import current_version
from flights import cabin_map
from flights.forms import PickerQuery, SearchForm
from flights.models import Flight
from flights.offers import fare_offers, local_time, search_flight_offers
from flights.routes import is_route_flown, routes_on_sale
from flights.rules import is_bookable
from kernel import replica
from kernel.web.forms import labelled_form_errors
from languages.formatting import format_money
from storefront.hold_form import admission_state, typed_names


@require_GET
def search(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET or None)
    offers, passengers, route_flown = None, 1, True
    if form.is_valid():
        data = form.cleaned_data
        passengers = data["passengers"]
        with replica.reads_within_lag():  # what is shown, not what is decided
            offers = search_flight_offers(
                origin=data["origin"], destination=data["destination"], local_date=data["date"]
            )
        route_flown = bool(offers) or is_route_flown(
            origin=data["origin"], destination=data["destination"]
        )
    elif form.is_bound:
        messages.error(request, _("Please correct the search.") + " " + labelled_form_errors(form))
    return render(
        request,
        "flights/search.html",
        {
            "form": form,
            "offers": offers,
            "passengers": passengers,
            "route_flown": route_flown,
            # Before any search: a hint of what can be found, and when.
            "routes": routes_on_sale() if not form.is_bound else [],
        },
    )


@require_GET
def seat_picker(request: HttpRequest, flight_id: int) -> HttpResponse:
    flight = get_object_or_404(Flight.objects.select_related("origin", "destination"), pk=flight_id)
    query = PickerQuery(request.GET)
    if not query.is_valid():
        messages.error(
            request, _("Choose a fare class and a party size.") + " " + labelled_form_errors(query)
        )
        return redirect("flights:search")
    if not is_bookable(flight, now=timezone.now()):
        messages.error(
            request, _("Flight %(code)s can no longer be booked.") % {"code": flight.code}
        )
        return redirect("flights:search")
    queue_url, turn_ends_at = admission_state(request, sale_id=flight.sale_id)
    if queue_url:  # the queue up front, as event pages do: nothing to pick or type yet
        return render(
            request,
            "flights/queue_first.html",
            {
                "flight": flight,
                "departure_local": local_time(flight.departure_at, flight.origin),
                "queue_url": queue_url,
            },
        )
    fare_class, passengers = query.cleaned_data["fare"], query.cleaned_data["passengers"]
    # Version before seats: the drawn map is at least as new as the version it carries.
    version = current_version(flight.sale_id)
    left_letters, right_letters, rows = cabin_map.cabin_rows(
        flight_id=flight.pk, fare_class=fare_class
    )
    fares = {f.fare_class: f for f in fare_offers([flight.pk])[flight.pk]}
    if fare_class not in fares:
        messages.error(
            request, _("Flight %(code)s does not sell that fare class.") % {"code": flight.code}
        )
        return redirect("flights:search")
    surcharges = sorted(
        {
            cell.surcharge
            for row in rows
            for cell in (*row.left, *row.right)
            if cell and cell.in_fare and cell.surcharge
        }
    )
    return render(
        request,
        "flights/seat_picker.html",
        {
            "flight": flight,
            "departure_local": local_time(flight.departure_at, flight.origin),
            "arrival_local": local_time(flight.arrival_at, flight.destination),
            "fare": fares[fare_class],
            # The fare choice starts at the cheapest class with room for the whole party.
            "chosen_class": next(
                (c.code for c in fares[fare_class].choices if c.left >= passengers), ""
            ),
            "other_fares": [f for f in fares.values() if f.fare_class != fare_class],
            "passengers": passengers,
            "passenger_slots": _slots(passengers, typed_names(request)),
            "left_letters": left_letters,
            "right_letters": right_letters,
            "rows": rows,
            "version": version,
            "premium_surcharge": " / ".join(
                format_money(s, fares[fare_class].currency) for s in surcharges
            ),
            "has_exit_rows": any(row.is_exit for row in rows),
            "turn_ends_at": turn_ends_at,
            "now": timezone.now(),
        },
    )


@never_cache
@require_GET
def seat_map_snapshot(request: HttpRequest, flight_id: int) -> JsonResponse:
    get_object_or_404(Flight.objects.only("pk"), pk=flight_id)
    return JsonResponse(cabin_map.seat_map_snapshot(flight_id=flight_id))


def _slots(passengers: int, typed: list[str]) -> list[tuple[int, str]]:
    """(number, name typed before a refusal) for each passenger field."""
    return [(n, typed[n - 1] if n <= len(typed) else "") for n in range(1, passengers + 1)]
