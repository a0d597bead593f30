"""Reads for the customer's flight search page: each flight's fare offers (what is left to
pick per fare class) with its local departure and arrival times."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.db.models import Count, F, Q
from django.utils import timezone
from django.utils.translation import gettext

from bookings.booking_classes import OpenClass, cheapest_open, choices_of
from bookings.models import BookingClass
from flights.models import Airport, FareClass, FareInventory, Flight, Seat, SeatStatus
from flights.rules import bookable_q

# Days outside this range cannot hold a flight, and their UTC bounds may not be representable.
from flights.selectors import local_day


@dataclass(frozen=True)
class FareOffer:
    """A fare class as the pages offer it: from its cheapest open booking class's price
    (docs/fare-classes.md), with every class a customer may choose in `choices`."""

    fare_class: str
    label: str
    price: Decimal
    currency: str
    seats_left: int
    booking_class: str = ""  # the cheapest open class ("": the fare class's own)
    booking_class_name: str = ""
    choices: tuple[OpenClass, ...] = ()

    @property
    def open_choices(self) -> list[OpenClass]:
        return [c for c in self.choices if c.left > 0]


@dataclass(frozen=True)
class FlightOffer:
    flight: Flight
    departure_local: datetime
    arrival_local: datetime
    duration: timedelta
    fares: list[FareOffer]

    @property
    def duration_text(self) -> str:
        minutes = int(self.duration.total_seconds()) // 60
        return gettext("%(hours)d h %(minutes)02d min") % {
            "hours": minutes // 60,
            "minutes": minutes % 60,
        }

    @property
    def arrival_day_offset(self) -> int:
        return (self.arrival_local.date() - self.departure_local.date()).days


def local_time(moment: datetime, airport: Airport) -> datetime:
    return moment.astimezone(ZoneInfo(airport.time_zone))


def _sellable_seats() -> Q:
    # An expired hold not yet swept is sellable: the next hold takes it over.
    return Q(status=SeatStatus.AVAILABLE) | Q(
        status=SeatStatus.HELD, held_until__lte=timezone.now()
    )


def fare_offers(flight_ids: list[int]) -> dict[int, list[FareOffer]]:
    """Per flight, each fare class with what is left to pick: the smaller of the fare units
    still for sale and the free physical seats (the overbooking margin has no seat to pick)."""
    free = {
        (row["sale__flight"], row["fare_class"]): row["n"]
        for row in Seat.objects.filter(_sellable_seats(), sale__flight__in=flight_ids)
        .values("sale__flight", "fare_class")
        .annotate(n=Count("id"))
    }
    nested: dict[tuple[int, str], list[BookingClass]] = {}
    for bc in BookingClass.objects.filter(sale__flight__in=flight_ids):
        nested.setdefault((bc.sale_id, bc.fare_class), []).append(bc)
    offers: dict[int, list[FareOffer]] = {fid: [] for fid in flight_ids}
    for inv in (
        FareInventory.objects.filter(sale__flight__in=flight_ids)
        .annotate(flight_id=F("sale__flight"))
        .order_by("flight_id", "price")
    ):
        choices = choices_of(inv, nested.get((inv.sale_id, inv.fare_class), []))
        cheapest = cheapest_open(choices) or choices[-1]
        offers[inv.flight_id].append(
            FareOffer(
                fare_class=inv.fare_class,
                label=FareClass(inv.fare_class).label,
                price=cheapest.price,
                currency=inv.currency,
                seats_left=min(inv.available, free.get((inv.flight_id, inv.fare_class), 0)),
                booking_class=cheapest.code,
                booking_class_name=cheapest.name,
                choices=tuple(choices),
            )
        )
    return offers


def search_flight_offers(
    *, origin: Airport, destination: Airport, local_date: date
) -> list[FlightOffer]:
    """Scheduled flights leaving `origin` on `local_date` in the origin airport's own time."""
    start, end = local_day(local_date, origin.time_zone)
    flights = list(
        Flight.objects.select_related("origin", "destination")
        .filter(
            bookable_q(now=timezone.now()),
            origin=origin,
            destination=destination,
            departure_at__gte=start,
            departure_at__lt=end,
        )
        .order_by("departure_at")
    )
    offers = fare_offers([f.pk for f in flights])
    return [
        FlightOffer(
            flight=f,
            departure_local=local_time(f.departure_at, f.origin),
            arrival_local=local_time(f.arrival_at, f.destination),
            duration=f.arrival_at - f.departure_at,
            fares=offers[f.pk],
        )
        for f in flights
    ]
