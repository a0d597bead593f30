"""Customer pages for finding an event and reading about it.  Reads only."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from events import selectors
from events.forms import EventSearchForm
from events.models import Event


@require_GET
def event_list(request: HttpRequest) -> HttpResponse:
    form = EventSearchForm(request.GET or None)
    filters = {}
    if form.is_bound and not form.is_valid():
        messages.error(request, gettext("Please correct the search.") + " " + _first_errors(form))
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
    plan = selectors.seat_plan(event=get_object_or_404(Event, pk=event_id))
    return render(request, "events/detail.html", {"event": event, "plan": plan})


def _first_errors(form) -> str:
    parts = []
    for name, errors in form.errors.items():
        label = form.fields[name].label if name in form.fields else None
        parts.append(f"{label or name.title()}: {errors[0]}" if name != "__all__" else errors[0])
    return " ".join(parts)
