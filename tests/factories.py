"""Typed factory_boy factories shared by every test package."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.models import Booking
from bookings.passengers import name_passengers
from flights.airport_names import local_name_fields
from flights.models import Airport, FareClass, Flight
from flights.services import CabinLayout, CabinSection, a320_layout, create_flight

User = get_user_model()


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"customer{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct-horse-battery")


class StaffFactory(UserFactory):
    username = factory.Sequence(lambda n: f"staff{n}")
    is_staff = True
    is_superuser = True


class AirportFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Airport
        django_get_or_create = ("code",)

    code = factory.Iterator(["SGN", "HAN", "DAD", "FRA", "MUC", "BER"])
    name = factory.LazyAttribute(lambda a: f"{a.code} International")
    city = factory.LazyAttribute(lambda a: a.code.title())
    country = "VN"
    time_zone = "Asia/Ho_Chi_Minh"


def moscow_to_petersburg_flight(**flight_fields):
    """SVO → LED with the airports' local names (flights.airport_names), for the tests of
    names in the customer's language."""
    svo = AirportFactory(
        code="SVO",
        name="Sheremetyevo International",
        city="Moscow",
        country="RU",
        time_zone="Europe/Moscow",
        **local_name_fields("SVO"),
    )
    led = AirportFactory(code="LED", name="Pulkovo", city="Saint Petersburg", country="RU",
                         time_zone="Europe/Moscow", **local_name_fields("LED"))  # fmt: skip
    return FlightFactory(origin=svo, destination=led, **flight_fields)


class FlightFactory(factory.django.DjangoModelFactory):
    """A scheduled A320 flight (3 business rows + 28 economy rows = 180 seats), built by the
    same service the application uses, so every test flight has real inventory and seats."""

    class Meta:
        model = Flight

    code = factory.Sequence(lambda n: f"SK{100 + n}")
    origin = factory.LazyFunction(lambda: AirportFactory(code="SGN"))
    destination = factory.LazyFunction(
        lambda: AirportFactory(code="HAN", city="Hanoi", time_zone="Asia/Ho_Chi_Minh")
    )
    departure_at = factory.LazyFunction(lambda: timezone.now() + timedelta(days=20))
    arrival_at = factory.LazyAttribute(lambda f: f.departure_at + timedelta(hours=2, minutes=10))
    layout = None

    @classmethod
    def _create(cls, model_class, *args, layout=None, **kwargs):
        return create_flight(layout=layout, **kwargs)


def economy_only_layout(
    *, rows: int = 30, overbook_limit: int = 3, price: str = "100.00"
) -> CabinLayout:
    """One economy cabin of `rows` x 6 seats: 30 rows are the 180 seats of the seed's example."""
    return CabinLayout(
        sections=(
            CabinSection(
                FareClass.ECONOMY,
                rows=rows,
                letters="ABCDEF",
                price=Decimal(price),
                overbook_limit=overbook_limit,
            ),
        ),
    )


# --- named holds: a booking is paid only once every passenger has a name ------------------------


def passenger_names(count: int) -> list[str]:
    """Names for `count` test passengers, the one place tests take them from."""
    return [f"Passenger {n}" for n in range(1, count + 1)]


def named_hold(
    *, customer, flight, seats=("12A", "12B"), fare_class: str = FareClass.ECONOMY
) -> Booking:
    """A seat hold with every passenger named: what a test that pays for a hold starts from."""
    return hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class=fare_class,
        seat_numbers=list(seats),
        passenger_names=passenger_names(len(seats)),
    )


def name_everyone(booking: Booking) -> Booking:
    """Name the passengers of a hold made without names (a waitlist offer, a seatless hold),
    through the service the booking page and `PUT /api/bookings/{id}/passengers` use."""
    name_passengers(
        customer=booking.customer,
        booking_id=booking.pk,
        names=passenger_names(booking.passengers.count()),
    )
    booking.refresh_from_db()
    return booking


__all__ = [
    "AirportFactory",
    "FlightFactory",
    "StaffFactory",
    "UserFactory",
    "a320_layout",
    "economy_only_layout",
    "name_everyone",
    "named_hold",
    "passenger_names",
]
