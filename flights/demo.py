"""Demo data: real airports, a month of flights with A320 cabins, a customer and a staff user."""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from flights.airport_names import local_name_fields
from flights.models import Airport, CabinDeparture, Carrier, Flight, FlightStatus
from flights.services import a320_layout, create_flight

# code, name, city, country, time zone, latitude, longitude (EU 261 needs country and distance)
AIRPORTS = [
    ("SGN", "Tan Son Nhat International", "Ho Chi Minh City", "VN", "Asia/Ho_Chi_Minh",
     "10.81880", "106.65190"),
    ("HAN", "Noi Bai International", "Hanoi", "VN", "Asia/Ho_Chi_Minh", "21.22120", "105.80720"),
    ("DAD", "Da Nang International", "Da Nang", "VN", "Asia/Ho_Chi_Minh", "16.04390", "108.19940"),
    ("FRA", "Frankfurt am Main", "Frankfurt", "DE", "Europe/Berlin", "50.03330", "8.57056"),
    ("MUC", "Munich Franz Josef Strauss", "Munich", "DE", "Europe/Berlin", "48.35380", "11.78610"),
    ("BER", "Berlin Brandenburg", "Berlin", "DE", "Europe/Berlin", "52.36670", "13.50330"),
    ("SVO", "Sheremetyevo International", "Moscow", "RU", "Europe/Moscow", "55.97260", "37.41460"),
    ("LED", "Pulkovo", "Saint Petersburg", "RU", "Europe/Moscow", "59.80030", "30.26250"),
]  # fmt: skip

# IATA designator, name, EU carrier (an operating licence of a Member State: EU 261 Art. 2(c))
CARRIERS = [
    ("VN", "Vietnam Airlines", False),
    ("LH", "Lufthansa", True),
    ("SU", "Aeroflot", False),
]

# code, origin, destination, local departure, duration, economy price, business price, currency
ROUTES = [
    ("VN213", "SGN", "HAN", time(7, 0), timedelta(hours=2, minutes=10), "59.00", "240.00", "EUR"),
    ("VN220", "HAN", "SGN", time(18, 30), timedelta(hours=2, minutes=10), "59.00", "240.00", "EUR"),
    ("VN122", "SGN", "DAD", time(9, 15), timedelta(hours=1, minutes=20), "39.00", "160.00", "EUR"),
    ("VN167", "DAD", "HAN", time(13, 40), timedelta(hours=1, minutes=20), "39.00", "160.00", "EUR"),
    ("LH190", "FRA", "BER", time(6, 50), timedelta(hours=1, minutes=10), "89.00", "390.00", "EUR"),
    ("LH191", "BER", "FRA", time(20, 5), timedelta(hours=1, minutes=10), "89.00", "390.00", "EUR"),
    ("LH2011", "MUC", "BER", time(11, 0), timedelta(hours=1, minutes=15), "79.00", "360.00", "EUR"),
    ("LH100", "FRA", "MUC", time(16, 20), timedelta(hours=0, minutes=55), "69.00", "310.00", "EUR"),
    ("SU10", "SVO", "LED", time(8, 30), timedelta(hours=1, minutes=25), "49.00", "210.00", "EUR"),
    ("SU11", "LED", "SVO", time(19, 45), timedelta(hours=1, minutes=25), "49.00", "210.00", "EUR"),
]


@dataclass
class DemoResult:
    airports: int
    flights_created: int
    flights_total: int
    credentials: list[tuple[str, str, str]]


# Departed flights of the past week, with the counts gate close records, so the fare-inventory
# admin shows overbooking suggestions from the first run (flights.overbooking needs 5).
HISTORY_DAYS = 7
# The demo's measured no-show rate per carrier (a route's passengers behave alike).
DEMO_NO_SHOW_RATES = {"VN": 0.06, "LH": 0.09, "SU": 0.04}


def load_demo(*, days: int = 30, password: str | None = None) -> DemoResult:
    """Idempotent: existing airports and flights are kept; demo users get a fresh password."""
    for code, name, city, country, tz, latitude, longitude in AIRPORTS:
        Airport.objects.update_or_create(
            code=code,
            defaults={
                "name": name,
                "city": city,
                "country": country,
                "time_zone": tz,
                "latitude": Decimal(latitude),
                "longitude": Decimal(longitude),
                **local_name_fields(code),
            },
        )
    for code, name, is_eu in CARRIERS:
        Carrier.objects.update_or_create(code=code, defaults={"name": name, "is_eu_carrier": is_eu})
    airports = {a.code: a for a in Airport.objects.all()}
    # One transaction for the whole schedule: on SQLite a commit per flight costs an fsync each.
    with transaction.atomic():
        created = _create_schedule(airports, timezone.now().date(), days)
        _create_history(airports, timezone.now().date())
    credentials = [
        _ensure_user("demo", "demo@seatkeeper.example", password, staff=False),
        _ensure_user("staff", "staff@seatkeeper.example", password, staff=True),
    ]
    return DemoResult(
        airports=len(airports),
        flights_created=created,
        flights_total=Flight.objects.count(),
        credentials=credentials,
    )


def _create_schedule(airports: dict[str, Airport], today: date, days: int) -> int:
    created = 0
    for offset in range(1, days + 1):
        for route in ROUTES:
            created += (
                _create_route_flight(airports, route, today + timedelta(days=offset)) is not None
            )
    return created


def _create_route_flight(airports: dict[str, Airport], route: tuple, day: date) -> Flight | None:
    """The route's flight of `day`, unless it exists already (None then)."""
    code, origin, destination, local_time, duration, economy, business, currency = route
    departure = _local(day, local_time, airports[origin].time_zone)
    if Flight.objects.filter(code=code, departure_at=departure).exists():
        return None
    return create_flight(
        code=code,
        origin=airports[origin],
        destination=airports[destination],
        departure_at=departure,
        arrival_at=departure + duration,
        layout=a320_layout(
            economy_price=Decimal(economy), business_price=Decimal(business), currency=currency
        ),
    )


def _create_history(airports: dict[str, Airport], today: date) -> None:
    """Departed flights with their recorded gate-close counts (synthetic: a seeded draw per
    flight, the same on every run); flights already there are kept."""
    for offset in range(1, HISTORY_DAYS + 1):
        for route in ROUTES:
            flight = _create_route_flight(airports, route, today - timedelta(days=offset))
            if flight is None:
                continue
            closed = flight.departure_at - timedelta(minutes=20)
            Flight.objects.filter(pk=flight.pk).update(
                status=FlightStatus.DEPARTED, gate_closed_at=closed, gate_settled_at=closed
            )
            _record_history(flight, rate=DEMO_NO_SHOW_RATES.get(flight.code[:2], 0.05))


def _record_history(flight: Flight, *, rate: float) -> None:
    draw = random.Random(f"{flight.code}/{flight.departure_at:%Y-%m-%d}")
    records = []
    for inventory in flight.sale.inventories.order_by("fare_class"):
        top = inventory.capacity + inventory.overbook_limit
        sold = draw.randint(max(top - 8, 0), top)
        no_shows = sum(draw.random() < rate for _ in range(sold))
        records.append(
            CabinDeparture(
                flight=flight,
                fare_class=inventory.fare_class,
                capacity=inventory.capacity,
                overbook_limit=inventory.overbook_limit,
                sold=sold,
                boarded=min(sold - no_shows, inventory.capacity),
                no_shows=no_shows,
                recorded_at=flight.departure_at - timedelta(minutes=20),
            )
        )
    CabinDeparture.objects.bulk_create(records)


def _local(day: date, at: time, tz_name: str) -> datetime:
    return datetime.combine(day, at, tzinfo=ZoneInfo(tz_name)).astimezone(ZoneInfo("UTC"))


def _ensure_user(
    username: str, email: str, password: str | None, *, staff: bool
) -> tuple[str, str, str]:
    password = password or secrets.token_urlsafe(9)
    user_model = get_user_model()
    with transaction.atomic():
        user, _ = user_model.objects.get_or_create(username=username, defaults={"email": email})
        user.is_staff = user.is_superuser = staff
        user.set_password(password)
        user.save()
    return ("staff (admin)" if staff else "customer", username, password)
