"""Events as a catalogue of the sale engine: the engine's questions, answered for an event.

An event's sale is opened when it goes on sale (`events.services.put_event_on_sale`), from a
snapshot of the venue plan: one inventory class per price category for its seats (the class
code is the category code), and one per standing area, sold by count (`GA-<n>`, see
`events.sale_snapshot`).  Events are never overbooked."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from bookings.catalogue import GateEntry, SaleSummary, SaleTexts, TicketFace
from bookings.models import Sale, Ticket
from events import rules, tickets
from events.errors import EventNotFound
from events.models import Event, EventStatus, PriceCategory
from events.sale_snapshot import SEAT_NO_PATTERN, is_standing_class, standing_sections


class EventCatalogue:
    owner = "event"
    owner_details = ()  # its ticket face reads the event when it needs it
    allows_overbooking = False
    rules_in_hold_function = True  # its SQL copy: migration bookings 0026
    checkin_time_path = None
    class_codes = None  # price categories are chosen per event
    default_class = None
    search_fields = ("event__name", "=event__id")
    seat_no_pattern = re.compile(SEAT_NO_PATTERN)
    not_found_error = EventNotFound
    texts = SaleTexts(
        not_found=_("There is no event %(id)s on sale."),
        not_bookable_title=_("This event can no longer be booked"),
        class_not_sold_title=_("This event has no such price category"),
        class_not_sold=_("This event does not sell %(class)s."),
        no_such_seat=_("No such seat at this event: %(seats)s."),
        sold_out=_("%(fare)s is sold out for this event."),
        hold_limit=_(
            "You can hold at most %(limit)d tickets for one event at a time. Pay for or cancel "
            "a hold you have before holding more."
        ),
        not_charged=_("This event has started or was cancelled; nothing was charged."),
        refund_called_off=_("The organiser cancelled this event: the full price is refunded."),
        refund_begun=_("The event has already started; the booking can no longer be cancelled."),
        refund_full=_("Cancelled at least %(days)d days before the event: full refund."),
        refund_partial=_(
            "Cancelled less than %(days)d days before the event: %(percent)d%% refund."
        ),
        refund_none=_("Cancelled less than %(hours)d hours before the event: no refund."),
    )

    def is_open(self, sale: Sale, *, now: datetime) -> bool:
        return rules.is_open(sale.event, now=now)

    def open_q(self, *, now: datetime, prefix: str = "") -> Q:
        return rules.open_q(now=now, prefix=f"{prefix}event__")

    def closed_detail(self, sale: Sale) -> str:
        event = sale.event
        if event.status == EventStatus.CANCELLED:
            return gettext("%(name)s was cancelled.") % {"name": event.name}
        if event.status == EventStatus.ON_SALE and timezone.now() < event.on_sale_at:
            return gettext("Tickets for %(name)s are not on sale yet.") % {"name": event.name}
        return gettext("%(name)s has started or is over; tickets are no longer sold.") % {
            "name": event.name
        }

    def is_called_off(self, sale: Sale) -> bool:
        return sale.event.status == EventStatus.CANCELLED

    def has_begun(self, sale: Sale, *, now: datetime) -> bool:
        event = sale.event
        return event.status == EventStatus.FINISHED or event.starts_at <= now

    def sells_seatless(self, sale: Sale, code: str) -> bool:
        # A seated category sold by count would sell places the seat map still shows free
        # (and tickets saying "Standing"): only a standing area is sold without seats.
        return is_standing_class(code)

    def class_label(self, code: str) -> str | None:
        return None  # a category's name belongs to its event; the code is shown as it is

    def require_seat_conditions(
        self, sale_id: int, seat_numbers: list[str], *, confirmed: bool
    ) -> None:
        return None  # no event seat carries conditions to confirm

    def seats_with_conditions(self, sale: Sale, seat_numbers: Iterable[str]) -> list[str]:
        return []

    def conditions_confirmation_url(self, booking_id: int) -> str | None:
        return None

    def sale_id_for(self, ref: int) -> int | None:
        return Event.objects.filter(pk=ref).values_list("sale_id", flat=True).first()

    def describe_class(self, sale: Sale, code: str) -> str:
        event = sale.event
        if is_standing_class(code):
            section = standing_sections(event=event).get(code)
            return gettext("Standing — %(area)s") % {"area": section.name if section else code}
        category = PriceCategory.objects.filter(event=event, code=code).first()
        if category is None:
            return code
        return gettext("Category %(code)s — %(name)s") % {"code": code, "name": category.name}

    def metric_label(self, sale: Sale) -> str:
        return f"{sale.event.name}#{sale.event.pk}"

    def describe(self, sale: Sale) -> SaleSummary:
        event = sale.event
        venue = event.venue
        return SaleSummary(
            title=event.name,
            starts_at=event.starts_at,
            time_zone=venue.time_zone,
            place=f"{venue.name}, {venue.city}",
        )

    def ticket_face(self, ticket: Ticket) -> TicketFace:
        return tickets.entry_ticket(ticket)

    def gate_entries(self, *, query: str, now: datetime, limit: int) -> list[GateEntry]:
        return tickets.gate_entries(query=query, now=now, limit=limit)

    def gate_entry(self, ref: int, *, now: datetime) -> GateEntry | None:
        return tickets.gate_entry(ref, now=now)
