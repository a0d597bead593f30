"""Flights as a catalogue of the sale engine: the engine's questions, answered for a flight."""

from __future__ import annotations

import re
from datetime import datetime

from django.db.models import Q
from django.utils.translation import gettext

from bookings.catalogue import SaleSummary
from bookings.models import Sale
from flights.models import FareClass
from flights.rules import bookable_q, is_bookable
from flights.selectors import sale_id_of_flight


class FlightCatalogue:
    owner = "flight"
    allows_overbooking = True
    class_codes = tuple(FareClass.values)
    search_fields = ("flight__code", "=flight__id")
    seat_no_pattern = re.compile(r"[1-9][0-9]?[A-K]")

    def is_open(self, sale: Sale, *, now: datetime) -> bool:
        return is_bookable(sale.flight, now=now)

    def open_q(self, *, now: datetime, prefix: str = "") -> Q:
        return bookable_q(now=now, prefix=f"{prefix}flight__")

    def closed_detail(self, sale: Sale) -> str:
        return gettext("Flight %(code)s has departed or was cancelled.") % {
            "code": sale.flight.code
        }

    def class_label(self, code: str) -> str | None:
        return FareClass(code).label if code in FareClass.values else None

    def sale_id_for(self, ref: int) -> int | None:
        return sale_id_of_flight(ref)

    def describe(self, sale: Sale) -> SaleSummary:
        flight = sale.flight
        return SaleSummary(
            title=gettext("flight %(code)s") % {"code": flight.code},
            starts_at=flight.departure_at,
            time_zone=flight.origin.time_zone,
            place=f"{flight.origin_id} → {flight.destination_id}",
        )
