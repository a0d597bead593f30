"""Flights as a catalogue of the sale engine: the engine's questions, answered for a flight."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from bookings.catalogue import GateEntry, SaleSummary, SaleTexts, TicketFace
from bookings.errors import SaleNotFound
from bookings.models import Sale, Ticket
from flights import tickets
from flights.models import FareClass, Flight, FlightStatus
from flights.rules import (
    bookable_q,
    exit_row_seats,
    is_bookable,
    require_exit_row_confirmation,
)
from flights.selectors import sale_id_of_flight

#: (sale-neutral problem type, the flight's own), on the wire since before events were sold.
FLIGHT_PROBLEM_TYPES = (
    ("sale-not-bookable", "flight-not-bookable"),
    ("sale-not-bookable-refunded", "flight-not-bookable-refunded"),
    ("class-not-sold", "fare-class-not-found"),
    ("seat-wrong-class", "seat-wrong-cabin"),
    ("seat-blocked", "seat-unavailable"),
)


class FlightCatalogue:
    owner = "flight"
    owner_details = ("origin", "destination")
    allows_overbooking = True
    rules_in_hold_function = True  # its SQL copy: migration bookings 0026
    checkin_time_path = "online_checkin__checked_in_at"  # flights.OnlineCheckIn
    class_codes = tuple(FareClass.values)
    default_class = FareClass.ECONOMY.value
    search_fields = ("flight__code", "=flight__id")
    seat_no_pattern = re.compile(r"[1-9][0-9]?[A-K]")
    not_found_error = SaleNotFound
    texts = SaleTexts(
        not_found=_("There is no flight %(id)s."),
        not_bookable_title=_("This flight can no longer be booked"),
        class_not_sold_title=_("This flight does not sell that fare class"),
        class_not_sold=_("Flight %(id)s does not sell %(class)s."),
        no_such_seat=_("No such seat on this flight: %(seats)s."),
        sold_out=_("%(fare)s is sold out on this flight."),
        hold_limit=_(
            "You can hold at most %(limit)d seats on one flight at a time. Pay for or cancel "
            "a hold you have before holding more."
        ),
        not_charged=_("This flight has departed or was cancelled; nothing was charged."),
        refund_called_off=_("The airline cancelled this flight: the full fare is refunded."),
        refund_begun=_("The flight has already departed; the booking can no longer be cancelled."),
        refund_full=_("Cancelled at least %(days)d days before departure: full refund."),
        refund_partial=_(
            "Cancelled less than %(days)d days before departure: %(percent)d%% refund."
        ),
        refund_none=_("Cancelled less than %(hours)d hours before departure: no refund."),
        closed_refunded_title=_("The flight can no longer be booked"),
        closed_refunded=_(
            "The flight departed or was cancelled before the payment arrived, so the "
            "seats were released. The payment is refunded in full."
        ),
        # The slugs flights answered with before the sale-neutral ones (issue 24): kept.
        problem_types=FLIGHT_PROBLEM_TYPES,
    )

    def is_open(self, sale: Sale, *, now: datetime) -> bool:
        return is_bookable(sale.flight, now=now)

    def open_q(self, *, now: datetime, prefix: str = "") -> Q:
        return bookable_q(now=now, prefix=f"{prefix}flight__")

    def closed_detail(self, sale: Sale) -> str:
        return gettext("Flight %(code)s has departed or was cancelled.") % {
            "code": sale.flight.code
        }

    def is_called_off(self, sale: Sale) -> bool:
        return sale.flight.status == FlightStatus.CANCELLED

    def has_begun(self, sale: Sale, *, now: datetime) -> bool:
        flight = sale.flight
        return flight.status == FlightStatus.DEPARTED or flight.departure_at <= now

    def sells_seatless(self, sale: Sale, code: str) -> bool:
        return True  # every cabin: that is how the overbooking units are sold

    def class_label(self, code: str) -> str | None:
        return FareClass(code).label if code in FareClass.values else None

    def sale_id_for(self, ref: int) -> int | None:
        return sale_id_of_flight(ref)

    def require_seat_conditions(
        self, sale_id: int, seat_numbers: list[str], *, confirmed: bool
    ) -> None:
        # No such flight, or a malformed seat number: the hold itself refuses those.
        flight = Flight.objects.filter(sale_id=sale_id).only("exit_rows").first()
        seats = [s for s in seat_numbers if self.seat_no_pattern.fullmatch(s)]
        if flight is not None:
            require_exit_row_confirmation(flight, seats, confirmed=confirmed)

    def seats_with_conditions(self, sale: Sale, seat_numbers: Iterable[str]) -> list[str]:
        return exit_row_seats(sale.flight, seat_numbers)

    def conditions_confirmation_url(self, booking_id: int) -> str | None:
        return reverse("flights_api:online_check_in", args=[booking_id])

    def describe_class(self, sale: Sale, code: str) -> str:
        return self.class_label(code) or code

    def metric_label(self, sale: Sale) -> str:
        return f"{sale.flight.code}#{sale.flight.pk}"

    def describe(self, sale: Sale) -> SaleSummary:
        flight = sale.flight
        return SaleSummary(
            title=gettext("flight %(code)s") % {"code": flight.code},
            starts_at=flight.departure_at,
            time_zone=flight.origin.time_zone,
            place=f"{flight.origin_id} → {flight.destination_id}",
        )

    def ticket_face(self, ticket: Ticket) -> TicketFace:
        return tickets.boarding_pass(ticket)

    def gate_entries(self, *, query: str, now: datetime, limit: int) -> list[GateEntry]:
        return tickets.gate_entries(query=query, now=now, limit=limit)

    def gate_entry(self, ref: int, *, now: datetime) -> GateEntry | None:
        return tickets.gate_entry(ref, now=now)
