"""The Redis hold filters when their Redis dies mid-sale or comes back empty.

Each test starts its own redis-server on a free port and kills it (never the shared one).
Real threads with their own PostgreSQL connections race for the units; every scenario ends
with exactly-once figures and `check_inventory`.
"""

import threading
import time

import pytest

from bookings import availability
from bookings.customer_holds import hold_seatless, hold_seats
from flights.models import FareInventory, Seat, SeatStatus
from flights.services import check_inventory
from flights.tasks import rebuild_hold_counters
from tests.concurrency import run_concurrently
from tests.factories import FlightFactory, UserFactory, economy_only_layout
from tests.redis_server import ThrowAwayRedis

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]

FILTERS = {"gate": (True, False), "counter": (False, True), "both": (True, True)}


@pytest.fixture
def own_redis(tmp_path):
    server = ThrowAwayRedis(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def filters_on(settings, own_redis):
    def switch(gate: bool, counter: bool) -> None:
        settings.HOLD_FILTERS = {
            **settings.HOLD_FILTERS,
            "REDIS_URL": own_redis.url,
            "REDIS_CLUSTER": False,  # a plain server to kill, also when the run is on a cluster
            "SEAT_GATE": gate,
            "AVAILABILITY_COUNTER": counter,
            "BACKOFF_SECONDS": 0.2,
            "TIMEOUT_SECONDS": 0.2,
        }
        availability._down_until = 0.0

    yield switch
    availability._down_until = 0.0


def killing_after(server, wins_before_kill, hold, *, evidence):
    """Wrap `hold` so the `wins_before_kill`-th win kills Redis, recording what it held."""
    lock, wins = threading.Lock(), [0]

    def call(*args):
        result = hold(*args)
        with lock:
            wins[0] += 1
            if wins[0] == wins_before_kill:
                evidence.update(keys=len(server.client().keys("hold:*")))
                server.kill()
        return result

    return call


@pytest.mark.parametrize("which", FILTERS)
def test_redis_dies_mid_sale_of_units_still_exactly_once(filters_on, own_redis, which):
    filters_on(*FILTERS[which])
    flight = FlightFactory(layout=economy_only_layout(rows=4, overbook_limit=2))  # 24 + 2
    people = [UserFactory() for _ in range(12)]
    evidence: dict = {}
    hold = killing_after(
        own_redis,
        5,
        lambda c: hold_seatless(
            customer=c, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
        ),
        evidence=evidence,
    )
    outcomes = run_concurrently([lambda c=people[i % 12]: hold(c) for i in range(60)], threads=12)

    assert own_redis.proc is None  # Redis really died during the sale
    if FILTERS[which][1]:
        assert evidence["keys"] >= 1  # and the counter was in use before it did
    assert len(outcomes.results) == 26
    assert outcomes.error_kinds == {"SoldOut": 34}
    assert FareInventory.objects.get(sale=flight.sale).held == 26
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.parametrize("which", FILTERS)
def test_redis_dies_mid_sale_of_seats_each_seat_held_once(filters_on, own_redis, which):
    filters_on(*FILTERS[which])
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))  # 6 seats
    seats = ["1A", "1B", "1C", "1D", "1E", "1F"]
    evidence: dict = {}
    hold = killing_after(
        own_redis,
        2,
        lambda c, seat: hold_seats(
            customer=c, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=[seat]
        ),
        evidence=evidence,
    )
    people = [UserFactory() for _ in range(12)]
    outcomes = run_concurrently(
        [lambda c=people[i % 12], s=seats[i % 6]: hold(c, s) for i in range(48)], threads=12
    )

    assert own_redis.proc is None
    assert evidence["keys"] >= 1
    assert len(outcomes.results) == 6
    assert set(outcomes.error_kinds) <= {"SeatUnavailable", "SoldOut"}
    assert sum(outcomes.error_kinds.values()) == 42
    held = Seat.objects.filter(sale=flight.sale, status=SeatStatus.HELD)
    assert sorted(held.values_list("seat_no", flat=True)) == seats
    assert len({s.booking_id for s in held}) == 6
    assert check_inventory(sale_id=flight.sale_id) == []


def test_redis_back_empty_rebuilds_the_counters(filters_on, own_redis):
    filters_on(True, True)
    flight = FlightFactory(layout=economy_only_layout(rows=4, overbook_limit=2))  # 26 units
    customer = UserFactory()
    for _ in range(3):
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2)
    assert availability.counter_value(sale_id=flight.sale_id, fare_class="ECONOMY") == 20
    own_redis.kill()
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2)
    own_redis.start()  # same port, empty
    time.sleep(0.25)  # past the backoff
    assert availability.counter_value(sale_id=flight.sale_id, fare_class="ECONOMY") is None
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert availability.counter_value(sale_id=flight.sale_id, fare_class="ECONOMY") == 17
    assert FareInventory.objects.get(sale=flight.sale).available == 17
    # beat rebuilds every open fare class too, the ones nobody has asked for yet included
    own_redis.kill()
    own_redis.start()
    time.sleep(0.25)
    assert rebuild_hold_counters() == 1  # the one open fare class
    assert availability.counter_value(sale_id=flight.sale_id, fare_class="ECONOMY") == 17


def test_counter_wrongly_at_zero_after_a_restart_stops_refusing_once_rebuilt(
    filters_on, own_redis, settings
):
    filters_on(False, True)
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))  # 6 units
    key = availability.counter_key(flight.pk, "ECONOMY")
    customer = UserFactory()
    # Redis restarts with stale data: the counter says 0 though PostgreSQL has 6 left.
    own_redis.kill()
    own_redis.start()
    time.sleep(0.25)
    own_redis.client().hset(key, mapping={"n": 0, "at": int(time.time() * 1000)})
    with pytest.raises(Exception) as refused:
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert type(refused.value).__name__ == "SoldOut"  # within the trust window
    rebuild_hold_counters()  # the next beat tick
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)

    # Stale and old: the first refusal checks with PostgreSQL itself, no beat needed.
    stale = int((time.time() - settings.HOLD_FILTERS["COUNTER_TRUST_SECONDS"] - 1) * 1000)
    own_redis.client().hset(key, mapping={"n": 0, "at": stale})
    outcomes = run_concurrently(
        [
            lambda c=c: hold_seatless(
                customer=c, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
            )
            for c in [UserFactory() for _ in range(8)]
        ],
        threads=8,
    )
    # One request rebuilds from PostgreSQL; the others go through to PostgreSQL meanwhile.
    assert len(outcomes.results) == 5
    assert outcomes.error_kinds == {"SoldOut": 3}
    assert FareInventory.objects.get(sale=flight.sale).held == 6
    assert check_inventory(sale_id=flight.sale_id) == []
