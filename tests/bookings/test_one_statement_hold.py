"""One rule, one place: the seatless hold in one statement (the PL/pgSQL function of migrations
bookings 0025 and 0026, bookings.one_statement_hold) and the Python path SQLite runs
(bookings.customer_holds._hold_units with bookings.holding) do the same thing.

A property-based test runs the same random sequence of seatless holds (three customers, one of
them a travel agent without a cap; fare classes that exist and one that does not; nested
booking classes and a missing one; parties of 1 to 4), time passing, expiry sweeps, cancels
and the sale closing, once through each path on PostgreSQL, each on its own fresh flight, and
compares every answer (the booking or the exception) and every row and counter: bookings,
passengers, fare inventory and booking classes.  Its control replaces the function by one
whose cap is off by one and shows the property catches it.  The sale-open and seatless rules'
SQL copies on random flight and event states: test_one_statement_hold_rules.py.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bookings.customer_holds import hold_seatless
from bookings.errors import HoldLimitReached
from bookings.inventory import set_booking_class
from bookings.lifecycle import cancel_hold, expire_holds
from bookings.models import Booking, BookingClass, Inventory, Passenger
from flights.models import FareClass, Flight
from flights.services import CabinLayout, CabinSection
from kernel.errors import DomainError, TooBusy
from tests.concurrency import locked_elsewhere
from tests.factories import FlightFactory, UserFactory
from tests.pgbouncer import lock_timeout_for_new_sessions

pytestmark = pytest.mark.django_db

REAL_NOW = timezone.now  # each run moves its own clock (monkeypatched)

CAP = 3
CUSTOMERS = 3  # the last one is a travel agent: no cap
FARE_CLASSES = ["ECONOMY", "BUSINESS", "FIRST"]  # FIRST is not sold on these flights
BOOKING_CLASSES = ["", "", "", "LAUNCH", "SAVER", "GHOST"]  # GHOST does not exist

# Weighted towards one customer and one fare class, so sequences reach the cap, the limits of
# the nested classes and sold out often (the control below needs the cap's boundary).
hold_op = st.tuples(
    st.just("hold"),
    st.sampled_from([0, 0, 0, 0, 1, 2]),
    st.sampled_from(["ECONOMY", "ECONOMY", "ECONOMY", *FARE_CLASSES[1:]]),
    st.sampled_from(BOOKING_CLASSES),
    st.integers(1, 4),
    st.booleans(),  # named passengers (the last one left blank) or none
)
operations = st.lists(
    st.one_of(
        hold_op,
        hold_op,
        hold_op,
        st.tuples(st.just("wait"), st.integers(1, 12)),  # minutes; a hold lasts 10
        st.tuples(st.just("expire")),
        st.tuples(st.just("cancel"), st.integers(0, 30)),
        st.tuples(st.just("close")),
    ),
    min_size=1,
    max_size=25,
)


def small_flight(start) -> Flight:
    flight = FlightFactory(
        departure_at=start + timedelta(days=2),
        layout=CabinLayout(
            sections=(
                CabinSection(FareClass.BUSINESS, rows=1, letters="AB", price=Decimal("300.00")),
                CabinSection(
                    FareClass.ECONOMY,
                    rows=1,
                    letters="ABCDEF",
                    price=Decimal("100.00"),
                    overbook_limit=2,
                ),
            )
        ),
    )
    for code, rank, limit, price in (("LAUNCH", 1, 3, "19.00"), ("SAVER", 2, 5, "49.00")):
        set_booking_class(
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            code=code,
            name=code.title(),
            rank=rank,
            auth_limit=limit,
            price=Decimal(price),
        )
    return flight


def customers():
    people = [UserFactory(username=f"prop-customer-{n}") for n in range(CUSTOMERS - 1)]
    agent = UserFactory(username="prop-agent")
    agent.user_permissions.add(Permission.objects.get(codename="book_on_behalf"))
    return [*people, agent]


def run(ops, *, one_statement: bool, people, start, monkeypatch) -> tuple[list, dict]:
    """Play `ops` on a fresh flight through one path; every answer and the final rows."""
    clock = [start]
    monkeypatch.setattr(timezone, "now", lambda: clock[0])
    flight = small_flight(start)
    sale_id = flight.sale_id
    answers: list = []
    made: list[Booking] = []
    with override_settings(
        SEATKEEPER={
            **_seatkeeper(),
            "HOLD_IN_ONE_STATEMENT": one_statement,
            "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE": CAP,
        }
    ):
        for op in ops:
            try:
                answers.append(_play(op, people=people, flight=flight, clock=clock, made=made))
            except DomainError as exc:
                answers.append(type(exc).__name__)
    return answers, _rows(sale_id, people)


def _play(op, *, people, flight, clock, made):
    kind = op[0]
    if kind == "hold":
        _, who, fare_class, booking_class, party, named = op
        booking = hold_seatless(
            customer=people[who],
            sale_id=flight.sale_id,
            fare_class=fare_class,
            passengers=party,
            passenger_names=[*(f"Ana {n}" for n in range(party - 1)), ""] if named else None,
            booking_class=booking_class,
        )
        made.append(booking)
        return ("held", _booking_row(booking, made), _passengers_of(booking))
    if kind == "wait":
        clock[0] += timedelta(minutes=op[1])
        return ("waited",)
    if kind == "expire":
        # The sweep is global (earlier examples' flights too): count this sale's.
        expire_holds(now=clock[0])
        return ("expired", Booking.objects.filter(sale_id=flight.sale_id, status="EXPIRED").count())
    if kind == "cancel":
        if not made:
            return ("nothing to cancel",)
        booking = made[op[1] % len(made)]
        owner = next(p for p in people if p.pk == booking.customer_id)
        cancel_hold(customer=owner, booking_id=booking.pk)
        return ("cancelled", made.index(booking))
    if kind == "close":
        Flight.objects.filter(pk=flight.pk).update(departure_at=clock[0] - timedelta(minutes=1))
        return ("closed",)
    raise AssertionError(op)


def _seatkeeper() -> dict:
    from django.conf import settings as django_settings

    return django_settings.SEATKEEPER


def _booking_row(booking: Booking, made: list[Booking]) -> tuple:
    """What the hold answered, with the booking's own id replaced by its place in the run."""
    return (
        made.index(booking),
        _who(booking.customer_id),
        booking.fare_class,
        booking.booking_class,
        booking.status,
        booking.seat_count,
        booking.amount,
        booking.currency,
        booking.expires_at,
        booking.created_at,
        booking.sale_id == booking.sale.pk,
    )


def _passengers_of(booking: Booking) -> list[tuple]:
    passengers = booking.written_passengers
    return [
        (
            p.full_name,
            p.seat_id,
            p.is_live,
            p.seat_conditions_confirmed_at,
            p.sale_id == booking.sale_id,
        )
        for p in sorted(passengers, key=lambda p: p.pk)
    ]


def _who(customer_id: int) -> str:
    """A customer by name: two databases (PostgreSQL, SQLite) number them differently."""
    return get_user_model().objects.get(pk=customer_id).username


def _rows(sale_id: int, people) -> dict:
    bookings = list(Booking.objects.filter(sale_id=sale_id).order_by("id"))
    place = {b.pk: n for n, b in enumerate(bookings)}
    return {
        "bookings": [
            (
                place[b.pk],
                _who(b.customer_id),
                b.fare_class,
                b.booking_class,
                b.status,
                b.seat_count,
                b.amount,
                b.currency,
                b.expires_at,
                b.created_at,
                b.updated_at,
                b.confirmed_at,
                b.closed_at,
            )
            for b in bookings
        ],
        "passengers": [
            (place[p.booking_id], p.full_name, p.seat_id, p.is_live, p.seat_conditions_confirmed_at)
            for p in Passenger.objects.filter(sale_id=sale_id).order_by("id")
        ],
        "inventory": list(
            Inventory.objects.filter(sale_id=sale_id)
            .order_by("fare_class")
            .values_list("fare_class", "capacity", "overbook_limit", "sold", "held", "price")
        ),
        "booking classes": list(
            BookingClass.objects.filter(sale_id=sale_id)
            .order_by("fare_class", "rank")
            .values_list("fare_class", "code", "rank", "auth_limit", "held", "sold", "price")
        ),
    }


def assert_same(ops, *, people, monkeypatch) -> None:
    start = REAL_NOW().replace(microsecond=0)
    one = run(ops, one_statement=True, people=people, start=start, monkeypatch=monkeypatch)
    python = run(ops, one_statement=False, people=people, start=start, monkeypatch=monkeypatch)
    assert one[0] == python[0], ops
    assert one[1] == python[1], ops


@pytest.fixture
def people():
    return customers()


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=operations)
def test_the_function_and_the_python_path_hold_alike(ops, people, monkeypatch):
    assert connection.vendor == "postgresql"
    assert_same(ops, people=people, monkeypatch=monkeypatch)


def test_the_sequences_reach_every_outcome(people, monkeypatch):
    """The property's sequences can reach each answer it compares (not only wins)."""
    ops = [
        ("hold", 0, "ECONOMY", "LAUNCH", 3, True),  # the launch class's limit
        ("hold", 1, "ECONOMY", "LAUNCH", 1, False),  # BookingClassSoldOut
        ("hold", 0, "ECONOMY", "", 2, True),  # over the cap: HoldLimitReached
        ("hold", 2, "ECONOMY", "", 4, True),  # the agent has no cap
        ("hold", 2, "ECONOMY", "", 2, True),  # SoldOut (8 units)
        ("hold", 1, "FIRST", "", 1, False),  # FareClassNotFound
        ("hold", 1, "BUSINESS", "GHOST", 1, False),  # BookingClassNotFound
        ("cancel", 1),
        ("wait", 11),
        ("expire",),
        ("hold", 0, "ECONOMY", "SAVER", 3, True),
        ("close",),
        ("hold", 1, "BUSINESS", "", 1, False),  # SaleClosed
    ]
    start = REAL_NOW().replace(microsecond=0)
    answers, _rows_after = run(
        ops, one_statement=True, people=people, start=start, monkeypatch=monkeypatch
    )
    kinds = [a if isinstance(a, str) else a[0] for a in answers]
    assert kinds == [
        "held",
        "BookingClassSoldOut",
        "HoldLimitReached",
        "held",
        "SoldOut",
        "FareClassNotFound",
        "BookingClassNotFound",
        "cancelled",
        "waited",
        "expired",
        "held",
        "closed",
        "SaleClosed",
    ], answers
    assert answers[9] == ("expired", 1)
    assert_same(ops, people=people, monkeypatch=monkeypatch)


def _cap_off_by_one() -> None:
    """Replace the function (inside this test's transaction: rolled back after it) by one that
    lets a customer hold one unit over the cap."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_functiondef('seatkeeper_hold_units'::regproc)")
        source = cursor.fetchone()[0]
        right = "COALESCE(v_held, 0) + p_units > p_cap"
        assert right in source
        cursor.execute(source.replace(right, f"{right} + 1"))


def test_control_the_property_catches_a_cap_off_by_one(people, monkeypatch):
    _cap_off_by_one()
    ops = [("hold", 0, "ECONOMY", "", CAP, True), ("hold", 0, "ECONOMY", "", 1, False)]
    with pytest.raises(AssertionError):
        assert_same(ops, people=people, monkeypatch=monkeypatch)

    # And hypothesis finds such a sequence by itself.
    @settings(max_examples=1000, deadline=None, database=None, derandomize=True)
    @given(ops=operations)
    def property_(ops):
        assert_same(ops, people=people, monkeypatch=monkeypatch)

    with pytest.raises(AssertionError):
        property_()


def test_the_one_statement_hold_keeps_the_cap_race_closed_in_one_transaction(people, monkeypatch):
    """Two holds of one customer in one transaction count one after the other: the second
    call's SUM sees the first call's booking (a fresh snapshot inside the VOLATILE function)."""
    start = REAL_NOW().replace(microsecond=0)
    flight = small_flight(start)
    with override_settings(
        SEATKEEPER={**_seatkeeper(), "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE": CAP}
    ):
        hold_seatless(
            customer=people[0], sale_id=flight.sale_id, fare_class="ECONOMY", passengers=3
        )
        with pytest.raises(HoldLimitReached):
            hold_seatless(
                customer=people[0], sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2
            )


@pytest.mark.django_db(transaction=True)
def test_a_lock_wait_past_lock_timeout_in_the_function_is_too_busy():
    """The function waits for the fare row in its last UPDATE; past `lock_timeout` that is
    the same TooBusy (the API's 503 with Retry-After, tests/api/test_auth_and_errors.py) as
    on the Python path, and nothing is written."""
    customer = UserFactory()
    flight = FlightFactory()
    fare_row = Inventory.objects.select_for_update().filter(
        sale_id=flight.sale_id, fare_class="ECONOMY"
    )
    with (
        locked_elsewhere(fare_row.get),
        lock_timeout_for_new_sessions(200),
        pytest.raises(TooBusy),
    ):
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2)
    assert not Booking.objects.filter(sale_id=flight.sale_id).exists()
