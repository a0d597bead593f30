"""kernel.compiled: a read compiled once answers exactly what the ORM's queryset answers, for
every later value, and refuses shapes it cannot bind safely."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed

from bookings import catalogue
from bookings.holding import _OPEN_INVENTORY
from bookings.models import Inventory, Passenger, SaleKind
from bookings.selectors import _PASSENGER_NAMES
from config.api.tokens import CachedTokenAuthentication
from kernel.compiled import CompiledRead
from tests.factories import FlightFactory, UserFactory, named_hold


def orm_inventory(sale_id: int, fare_class: str):
    return (
        Inventory.objects.select_related("sale", *catalogue.owner_paths("sale__"))
        .filter(sale_id=sale_id, fare_class=fare_class)
        .first()
    )


def same_instance(a, b) -> None:
    """Same model, same field values of the same types (the converters ran: decimals, aware
    datetimes, JSON), same database and state."""
    assert type(a) is type(b)
    fields = [f.attname for f in a._meta.concrete_fields]
    values_a, values_b = [getattr(a, f) for f in fields], [getattr(b, f) for f in fields]
    assert values_a == values_b
    assert [type(v) for v in values_a] == [type(v) for v in values_b]
    assert (a._state.db, a._state.adding) == (b._state.db, b._state.adding)


def same_rows(a, b) -> None:
    """Same instance, same field values, same select_related objects loaded, field for field."""
    assert (a is None) == (b is None)
    if a is None:
        return
    same_instance(a, b)
    same_instance(a.sale, b.sale)
    assert set(a._state.fields_cache) == set(b._state.fields_cache)
    assert set(a.sale._state.fields_cache) == set(b.sale._state.fields_cache)
    for name in a.sale._state.fields_cache:
        owner_a = a.sale._state.fields_cache[name]
        owner_b = b.sale._state.fields_cache[name]
        assert (owner_a is None) == (owner_b is None)
        if owner_a is not None:
            same_instance(owner_a, owner_b)
            # The owner points back at the very sale it came with, as the ORM's does.
            assert owner_a.sale is a.sale and owner_b.sale is b.sale


@pytest.mark.django_db
def test_the_compiled_inventory_read_answers_what_the_orm_answers():
    flights = [FlightFactory(), FlightFactory()]
    for flight in flights:
        for fare_class in ("ECONOMY", "BUSINESS", "NOPE"):
            same_rows(
                _OPEN_INVENTORY.first(sale_id=flight.sale_id, fare_class=fare_class),
                orm_inventory(flight.sale_id, fare_class),
            )
    assert _OPEN_INVENTORY.first(sale_id=10**9, fare_class="ECONOMY") is None


@pytest.mark.django_db
def test_a_read_beside_a_call_answers_what_the_orm_answers_in_one_statement():
    """`beside`: the call's columns and the read's instance (None when it finds no row), in
    one statement; the compiled read afterwards still answers on its own."""
    flight = FlightFactory()
    call = "(SELECT %s::int AS answer, %s::text AS word)"
    for fare_class in ("ECONOMY", "BUSINESS", "NOPE"):
        with CaptureQueriesContext(connection) as captured:
            tail, found = _OPEN_INVENTORY.beside(
                call, [7, "seven"], using="default", sale_id=flight.sale_id, fare_class=fare_class
            )
        assert len(captured.captured_queries) == 1
        assert tail == (7, "seven")
        same_rows(found, orm_inventory(flight.sale_id, fare_class))
    same_rows(
        _OPEN_INVENTORY.first(sale_id=flight.sale_id, fare_class="ECONOMY"),
        orm_inventory(flight.sale_id, "ECONOMY"),
    )


class _OwnerlessEvents:
    """A catalogue for event sales that joins no owner row (as a bare-sale test swaps in)."""

    owner = None
    owner_details: tuple[str, ...] = ()


@pytest.mark.django_db
def test_a_catalogue_swapped_in_later_compiles_a_new_read(monkeypatch):
    """The read's joins follow the registry at call time, not the one it was first compiled
    under: a test (or a late registration) that changes the catalogues on a connection that
    already compiled the read must not get the old joins back."""
    flight = FlightFactory()
    fields = lambda inventory: set(inventory.sale._state.fields_cache)  # noqa: E731
    before = _OPEN_INVENTORY.first(sale_id=flight.sale_id, fare_class="ECONOMY")
    assert fields(before) == {"flight", "event"}

    monkeypatch.setitem(catalogue._registry, str(SaleKind.EVENT), _OwnerlessEvents())
    swapped = _OPEN_INVENTORY.first(sale_id=flight.sale_id, fare_class="ECONOMY")
    assert fields(swapped) == {"flight"}
    same_rows(swapped, orm_inventory(flight.sale_id, "ECONOMY"))

    monkeypatch.undo()
    after = _OPEN_INVENTORY.first(sale_id=flight.sale_id, fare_class="ECONOMY")
    assert fields(after) == {"flight", "event"}
    same_rows(after, orm_inventory(flight.sale_id, "ECONOMY"))


@pytest.mark.django_db
def test_control_a_read_without_its_shape_keeps_the_joins_it_was_compiled_with(monkeypatch):
    """The control: the same read with no `shape` serves the first registry's joins after the
    swap (what failed CI once: a bare-sale test ran first on the worker's connection)."""
    unshaped = CompiledRead(
        Inventory,
        lambda sale_id, fare_class: (
            Inventory.objects.select_related("sale", *catalogue.owner_paths("sale__"))
            .filter(sale_id=sale_id, fare_class=fare_class)
            .order_by("pk")[:1]
        ),
        sale_id=int,
        fare_class=str,
    )
    flight = FlightFactory()
    monkeypatch.setitem(catalogue._registry, str(SaleKind.EVENT), _OwnerlessEvents())
    unshaped.first(sale_id=flight.sale_id, fare_class="ECONOMY")  # compiled without the event
    monkeypatch.undo()
    stale = unshaped.first(sale_id=flight.sale_id, fare_class="ECONOMY")
    assert set(stale.sale._state.fields_cache) == {"flight"}
    assert set(orm_inventory(flight.sale_id, "ECONOMY").sale._state.fields_cache) == {
        "flight",
        "event",
    }


@pytest.mark.django_db
def test_it_is_one_statement_with_the_new_values_bound():
    flight = FlightFactory()
    _OPEN_INVENTORY.first(sale_id=flight.sale_id, fare_class="ECONOMY")  # compiled here
    with CaptureQueriesContext(connection) as queries:
        found = _OPEN_INVENTORY.first(sale_id=flight.sale_id, fare_class="BUSINESS")
    assert len(queries) == 1
    assert found is not None and found.fare_class == "BUSINESS"
    assert str(flight.sale_id) in queries[0]["sql"] and "BUSINESS" in queries[0]["sql"]


@pytest.mark.django_db(transaction=True)
def test_each_thread_compiles_on_its_own_connection():
    flight = FlightFactory()
    found: list = []
    barrier = threading.Barrier(4)

    def read(fare_class: str) -> None:
        try:
            barrier.wait(timeout=10)
            for _ in range(20):
                found.append(
                    (
                        fare_class,
                        _OPEN_INVENTORY.first(
                            sale_id=flight.sale_id, fare_class=fare_class
                        ).fare_class,
                    )
                )
        finally:
            connection.close()

    threads = [threading.Thread(target=read, args=(c,)) for c in ("ECONOMY", "BUSINESS") * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 80
    assert all(asked == got for asked, got in found)


@pytest.mark.django_db(transaction=True)
def test_a_read_is_compiled_once_per_process_and_bound_to_each_threads_connection(monkeypatch):
    """A web thread's first request no longer compiles the hot reads: the first thread to
    ask compiles, every other binds a copy of that compiler to its own connection."""
    read = CompiledRead(
        Token, lambda key: Token.objects.select_related("user").filter(key=key)[:1], key=str
    )
    compiled_in: list[int] = []
    real = read._compile
    monkeypatch.setattr(
        read, "_compile", lambda alias: compiled_in.append(threading.get_ident()) or real(alias)
    )
    user = UserFactory()
    token = Token.objects.create(user=user)
    own_connection: list[bool] = []

    def first_request() -> None:
        try:
            assert read.first(key=token.key).user_id == user.pk
            bound = read._compiled("default").compiler.connection
            own_connection.append(bound is connections["default"])
        finally:
            connection.close()

    threads = [threading.Thread(target=first_request) for _ in range(3)]
    for t in threads:
        t.start()
        t.join()
    assert len(compiled_in) == 1  # once, by the first thread
    assert own_connection == [True, True, True]
    # The template itself is bound to no connection (a dead thread's would stay open).
    [template] = read._templates.values()
    assert template.compiler.connection is None


@pytest.mark.django_db
def test_shapes_it_cannot_bind_are_refused():
    # A value used twice cannot be told apart from itself: refused, not guessed.
    twice = CompiledRead(
        Inventory, lambda n: Inventory.objects.filter(capacity=n, held=n)[:1], n=int
    )
    with pytest.raises(ValueError):
        twice.first(n=1)
    # A value the queryset never passes as a parameter (here: folded into a slice).
    sliced = CompiledRead(Inventory, lambda n: Inventory.objects.all()[: n - 2_000_000_000], n=int)
    with pytest.raises(ValueError):
        sliced.first(n=3)
    with pytest.raises(TypeError):
        CompiledRead(Inventory, lambda when: Inventory.objects.all(), when=float)
    with pytest.raises(TypeError):
        _OPEN_INVENTORY.first(sale_id=1)


@pytest.mark.django_db
def test_token_check_keeps_drfs_answers(rf):
    user, inactive = UserFactory(), UserFactory(is_active=False)
    token, dead = Token.objects.create(user=user), Token.objects.create(user=inactive)
    auth = CachedTokenAuthentication()
    assert auth._credentials_from_database(token.key) == user
    with pytest.raises(AuthenticationFailed, match="Invalid token"):
        auth._credentials_from_database("no-such-token")
    with pytest.raises(AuthenticationFailed, match="inactive"):
        auth._credentials_from_database(dead.key)


@pytest.mark.django_db
def test_the_passenger_names_read_answers_the_orms_tuples():
    """`rows`: a values_list queryset's tuples, for every booking shape the names check meets
    (named seats, a nameless passenger, one no longer live, a seatless passenger, none)."""
    flight = FlightFactory()
    customer = UserFactory()
    named = named_hold(customer=customer, flight=flight, seats=("12A", "12B"))
    mixed = named_hold(customer=customer, flight=flight, seats=("14A", "14B", "14C"))
    first, second, third = Passenger.objects.filter(booking=mixed).order_by("id")
    Passenger.objects.filter(pk=first.pk).update(full_name="")
    Passenger.objects.filter(pk=second.pk).update(is_live=False)
    Passenger.objects.filter(pk=third.pk).update(seat=None)

    def orm(booking_id: int) -> list[tuple]:
        return list(
            Passenger.objects.filter(booking_id=booking_id, is_live=True)
            .order_by(F("seat__seat_no").asc(nulls_last=True), "id")
            .values_list("pk", "seat__seat_no", "full_name")
        )

    for booking_id in (named.pk, mixed.pk, 10**9):
        assert _PASSENGER_NAMES.rows(booking_id=booking_id) == orm(booking_id)
    assert _PASSENGER_NAMES.rows(booking_id=mixed.pk) == [
        (first.pk, "14A", ""),
        (third.pk, None, third.full_name),
    ]


@pytest.mark.django_db
def test_querysets_of_other_iterables_are_refused():
    flat = CompiledRead(
        Inventory, lambda n: Inventory.objects.filter(pk=n).values_list("pk", flat=True), n=int
    )
    with pytest.raises(TypeError):
        flat.rows(n=1)
    dicts = CompiledRead(Inventory, lambda n: Inventory.objects.filter(pk=n).values("pk"), n=int)
    with pytest.raises(TypeError):
        dicts.rows(n=1)
    with pytest.raises(TypeError):
        _OPEN_INVENTORY.rows(sale_id=1, fare_class="ECONOMY")  # instances, not rows
    with pytest.raises(TypeError):
        _PASSENGER_NAMES.first(booking_id=1)  # rows, not instances
