from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import (
    FareClassNotFound,
    HoldExpired,
    InvalidBookingState,
    SaleClosed,
    SaleNotFound,
    SeatNotFound,
    SeatUnavailable,
    SeatWrongCabin,
    SoldOut,
)
from bookings.lifecycle import cancel_hold, expire_holds
from bookings.models import Booking, BookingStatus, Passenger
from flights.models import FareClass, FareInventory, FlightStatus, Seat, SeatStatus
from flights.services import check_inventory
from kernel.errors import InvalidRequest
from kernel.models import OutboxEvent
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def economy(flight):
    return FareInventory.objects.get(sale=flight.sale, fare_class=FareClass.ECONOMY)


def snapshot(flight):
    inv = economy(flight)
    return (
        inv.held,
        inv.sold,
        list(
            Seat.objects.filter(sale=flight.sale).order_by("pk").values_list("status", "booking_id")
        ),
        Booking.objects.count(),
        Passenger.objects.count(),
    )


def test_hold_takes_all_seats_and_prices_them_on_the_server(customer, flight):
    booking = hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=["12b", "12A"],
        passenger_names=["Ana Lima", "Bo Chen"],
    )
    assert booking.status == BookingStatus.HELD
    assert booking.seat_count == 2
    # Row 12 is an exit row: fare 89.00 + 15.00 surcharge per seat.
    assert booking.amount == Decimal("208.00") and booking.currency == "EUR"
    assert (
        timedelta(minutes=9, seconds=59)
        < booking.expires_at - timezone.now()
        <= timedelta(minutes=10)
    )
    seats = Seat.objects.filter(sale=flight.sale, seat_no__in=["12A", "12B"])
    assert {(s.status, s.booking_id, s.held_until) for s in seats} == {
        (SeatStatus.HELD, booking.pk, booking.expires_at)
    }
    assert sorted(booking.passengers.values_list("seat__seat_no", "full_name")) == [
        ("12A", "Ana Lima"),
        ("12B", "Bo Chen"),
    ]
    assert economy(flight).held == 2
    assert check_inventory(sale_id=flight.sale_id) == []


def test_hold_of_free_and_taken_seat_changes_nothing(customer, other_customer, flight):
    hold_seats(
        customer=other_customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12B"]
    )
    before = snapshot(flight)
    with pytest.raises(SeatUnavailable) as err:
        hold_seats(
            customer=customer,
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=["12A", "12B"],
        )
    assert err.value.extra["seats"] == ["12B"]
    assert snapshot(flight) == before
    assert Seat.objects.get(sale=flight.sale, seat_no="12A").status == SeatStatus.AVAILABLE


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"sale_id": 999_999}, SaleNotFound),
        ({"fare_class": "FIRST"}, FareClassNotFound),
        ({"seat_numbers": ["99Z"]}, SeatNotFound),
        ({"seat_numbers": ["45A"]}, SeatNotFound),
        ({"seat_numbers": ["1A"]}, SeatWrongCabin),
        ({"seat_numbers": ["12A", "12a"]}, InvalidRequest),
        ({"seat_numbers": []}, InvalidRequest),
        ({"seat_numbers": [f"{r}A" for r in range(10, 20)]}, InvalidRequest),
        ({"passenger_names": ["only one"], "seat_numbers": ["12A", "12B"]}, InvalidRequest),
    ],
)
def test_bad_hold_requests_are_refused_and_change_nothing(customer, flight, kwargs, error):
    request = {
        "sale_id": flight.sale_id,
        "fare_class": "ECONOMY",
        "seat_numbers": ["12A"],
        **kwargs,
    }
    before = snapshot(flight)
    with pytest.raises(error):
        hold_seats(customer=customer, **request)
    assert snapshot(flight) == before


def test_departed_flight_cannot_be_held(customer):
    flight = FlightFactory(departure_at=timezone.now() - timedelta(hours=1))
    with pytest.raises(SaleClosed):
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
        )
    with pytest.raises(SaleClosed):
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert not Booking.objects.exists()


def test_cancelled_flight_cannot_be_held(customer, flight):
    flight.status = FlightStatus.CANCELLED
    flight.save(update_fields=["status"])
    with pytest.raises(SaleClosed):
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
        )


def test_blocked_seat_is_unavailable(customer, flight):
    Seat.objects.filter(sale=flight.sale, seat_no="7C").update(status=SeatStatus.BLOCKED)
    with pytest.raises(SeatUnavailable):
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["7C"]
        )


def test_expired_hold_is_taken_over_and_the_stale_booking_expired(customer, other_customer, flight):
    stale = hold_seats(
        customer=other_customer,
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=["12A", "12B"],
    )
    past = timezone.now() - timedelta(seconds=1)
    Booking.objects.filter(pk=stale.pk).update(expires_at=past)
    Seat.objects.filter(booking=stale).update(held_until=past)

    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )

    stale.refresh_from_db()
    assert stale.status == BookingStatus.EXPIRED
    assert Seat.objects.get(sale=flight.sale, seat_no="12A").booking_id == booking.pk
    # The stale booking's other seat is released, not stranded.
    assert Seat.objects.get(sale=flight.sale, seat_no="12B").status == SeatStatus.AVAILABLE
    assert economy(flight).held == 1
    assert (
        OutboxEvent.objects.filter(event_type="booking.expired", aggregate_id=str(stale.pk)).count()
        == 1
    )
    assert check_inventory(sale_id=flight.sale_id) == []


def test_live_hold_is_not_taken_over(customer, other_customer, flight):
    hold_seats(
        customer=other_customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    with pytest.raises(SeatUnavailable):
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
        )


def test_seatless_holds_sell_exactly_capacity_plus_overbook(customer):
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=2))  # 6 seats + 2
    held = [
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=3)
        for _ in range(2)
    ]
    assert held[0].amount == Decimal("300.00")
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2)
    with pytest.raises(SoldOut):
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert economy(flight).held == 8
    # Seat holds compete for the same units.
    with pytest.raises(SoldOut):
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["1A"]
        )
    # The units are reserved last; the booking, passenger and seat claim written before are
    # rolled back with it.
    assert Seat.objects.get(sale=flight.sale, seat_no="1A").status == SeatStatus.AVAILABLE
    assert Booking.objects.filter(sale=flight.sale).count() == 3
    assert Passenger.objects.filter(booking__sale=flight.sale).count() == 8
    assert check_inventory(sale_id=flight.sale_id) == []


def test_expire_holds_releases_and_is_safe_to_run_twice(customer, flight):
    b1 = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A", "12B"]
    )
    b2 = hold_seatless(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2
    )
    live = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20A"]
    )
    Booking.objects.filter(pk__in=[b1.pk, b2.pk]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert expire_holds() == 2
    assert expire_holds() == 0

    assert set(Booking.objects.filter(pk__in=[b1.pk, b2.pk]).values_list("status", flat=True)) == {
        BookingStatus.EXPIRED
    }
    assert Booking.objects.get(pk=live.pk).status == BookingStatus.HELD
    assert Seat.objects.get(sale=flight.sale, seat_no="12A").status == SeatStatus.AVAILABLE
    assert economy(flight).held == 1
    assert OutboxEvent.objects.filter(event_type="booking.expired").count() == 2
    assert check_inventory(sale_id=flight.sale_id) == []


def test_expire_holds_in_small_batches(customer, flight):
    for seat in ["10A", "10B", "10C", "10D", "10E"]:
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=[seat]
        )
    Booking.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert expire_holds(batch_size=2) == 5
    assert economy(flight).held == 0


def test_cancel_hold(customer, other_customer, flight):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    from bookings.errors import BookingNotFound

    with pytest.raises(BookingNotFound):
        cancel_hold(customer=other_customer, booking_id=booking.pk)
    cancel_hold(customer=customer, booking_id=booking.pk)
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CANCELLED
    assert Seat.objects.get(sale=flight.sale, seat_no="12A").status == SeatStatus.AVAILABLE
    with pytest.raises(InvalidBookingState):
        cancel_hold(customer=customer, booking_id=booking.pk)
    assert economy(flight).held == 0
    assert check_inventory(sale_id=flight.sale_id) == []


def test_cancel_of_expired_hold_says_so(customer, flight):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    expire_holds()
    with pytest.raises(HoldExpired):
        cancel_hold(customer=customer, booking_id=booking.pk)


def statements(captured) -> list[str]:
    # Savepoints exist only because the test itself runs inside a transaction.
    return [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]


def test_a_hold_lapses_at_its_deadline_and_only_while_held(customer, flight):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    assert not booking.hold_lapsed()
    assert not booking.hold_lapsed(booking.expires_at - timedelta(seconds=1))
    assert booking.hold_lapsed(booking.expires_at)
    booking.status = BookingStatus.CONFIRMED  # a sold booking's deadline means nothing
    assert not booking.hold_lapsed(booking.expires_at + timedelta(days=1))


def test_hold_path_query_budget(customer, flight):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    # [The per-customer cap: lock the customer on the flight, count their held units], lock
    # seats (+flight, +fare), insert booking, claim seats, insert passengers, and last reserve
    # units: the hot fare-inventory row is locked only by the final statement.
    with CaptureQueriesContext(connection) as captured:
        hold_seats(
            customer=customer,
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=["12A", "12B"],
        )
    sql = statements(captured)
    assert len(sql) == 2 + 5, sql
    assert [s.split()[0] for s in sql[2:]] == ["SELECT", "INSERT", "UPDATE", "INSERT", "UPDATE"], (
        sql
    )
    assert sql[-1].startswith('UPDATE "bookings_inventory"'), sql
    assert not any(s.startswith('UPDATE "bookings_inventory"') for s in sql[:-1]), sql
    # A seatless hold on PostgreSQL is one statement: the function of migrations bookings
    # 0025 and 0026 (cap, price, the sale's rules, inserts, reserve last), with the fare row,
    # sale and flight read beside it; not even a savepoint around it (its own transaction:
    # tests/bookings/test_one_statement_hold_autocommit.py).
    with CaptureQueriesContext(connection) as captured:
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2)
    sql = statements(captured)
    assert len(sql) == 1 == len(captured.captured_queries), captured.captured_queries
    assert "seatkeeper_hold_units(" in sql[0], sql


def test_control_the_python_seatless_hold_makes_six_statements(customer, flight, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.SEATKEEPER = {**settings.SEATKEEPER, "HOLD_IN_ONE_STATEMENT": False}
    # [Cap], read price and flight (no lock), insert booking, insert passengers, reserve last.
    with CaptureQueriesContext(connection) as captured:
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2)
    sql = statements(captured)
    assert len(sql) == 2 + 4, sql
    assert "FOR UPDATE" not in sql[2], sql
    assert sql[-1].startswith('UPDATE "bookings_inventory"'), sql
    assert not any(s.startswith('UPDATE "bookings_inventory"') for s in sql[:-1]), sql


def test_check_inventory_reports_drift(customer, flight):
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    FareInventory.objects.filter(sale=flight.sale, fare_class="ECONOMY").update(held=0)
    problems = check_inventory(sale_id=flight.sale_id)
    assert any("held=0 but HELD bookings cover 1" in p for p in problems)


def test_database_refuses_overselling_even_if_code_is_wrong(flight):
    from django.db import IntegrityError, transaction

    inv = economy(flight)
    with pytest.raises(IntegrityError), transaction.atomic():
        FareInventory.objects.filter(pk=inv.pk).update(sold=inv.capacity + inv.overbook_limit + 1)
    with pytest.raises(IntegrityError), transaction.atomic():
        FareInventory.objects.filter(pk=inv.pk).update(held=-1)


def test_database_refuses_two_live_passengers_on_one_seat(customer, flight):
    from django.db import IntegrityError, transaction

    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    seat = Seat.objects.get(sale=flight.sale, seat_no="12A")
    other = UserFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        twin = Booking.objects.create(
            customer=other,
            sale=flight.sale,
            fare_class="ECONOMY",
            seat_count=1,
            amount=1,
            currency="EUR",
            expires_at=booking.expires_at,
            created_at=booking.created_at,
            updated_at=booking.updated_at,
        )
        Passenger.objects.create(booking=twin, sale_id=twin.sale_id, seat=seat)


def test_seatless_passenger_gets_a_seat_later(customer, flight):
    from bookings.passengers import assign_seat

    booking = hold_seatless(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2
    )
    first, second = booking.passengers.order_by("pk")
    hold_seats(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["15C"]
    )
    with pytest.raises(SeatUnavailable):
        assign_seat(booking_id=booking.pk, passenger_id=first.pk, seat_no="15C")
    with pytest.raises(SeatWrongCabin):
        assign_seat(booking_id=booking.pk, passenger_id=first.pk, seat_no="2A")
    held_before = economy(flight).held
    assign_seat(booking_id=booking.pk, passenger_id=first.pk, seat_no="15d")
    seat = Seat.objects.get(sale=flight.sale, seat_no="15D")
    assert (seat.status, seat.booking_id, seat.held_until) == (
        SeatStatus.HELD,
        booking.pk,
        booking.expires_at,
    )
    with pytest.raises(InvalidBookingState):
        assign_seat(booking_id=booking.pk, passenger_id=first.pk, seat_no="15E")
    assert economy(flight).held == held_before  # the unit was already counted
    assert check_inventory(sale_id=flight.sale_id) == []
    # Expiry releases the assigned seat with the rest of the booking.
    Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    expire_holds()
    assert Seat.objects.get(sale=flight.sale, seat_no="15D").status == SeatStatus.AVAILABLE
    assert second.seat_id is None
    assert check_inventory(sale_id=flight.sale_id) == []


def test_check_inventory_command(flight, customer):
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    out = StringIO()
    call_command("check_inventory", "--flight", str(flight.pk), stdout=out)
    assert "Inventory clean." in out.getvalue()
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    FareInventory.objects.filter(sale=flight.sale, fare_class="ECONOMY").update(held=0)
    out = StringIO()
    with pytest.raises(CommandError, match="1 inventory problem"):
        call_command("check_inventory", stdout=out)
    assert "held=0" in out.getvalue()
