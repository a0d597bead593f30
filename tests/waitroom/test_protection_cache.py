"""The gate's "is this sale protected?" comes from the cache (issue 12) and is never stale
past a change: protecting, moving or removing a waiting room retires every cached answer,
also one stored by a reader that looked at the database just before the change committed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from bookings.models import Booking
from tests.api.conftest import client_for
from tests.factories import UserFactory
from tests.waitroom.room_helpers import protect, small_flight
from waitroom import admission, protection
from waitroom.models import WaitingRoom

pytestmark = pytest.mark.django_db(transaction=True)


def hold(client, flight, seat):
    return client.post(
        "/api/bookings",
        {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": [seat], "exitRowConfirmed": True},
        format="json",
    )


def test_a_cached_answer_costs_no_query(django_assert_num_queries):
    flight = small_flight()
    assert protection.cached_room_of_sale(sale_id=flight.pk) is None
    with django_assert_num_queries(0):
        assert protection.cached_room_of_sale(sale_id=flight.pk) is None
    sale = protect(flight)
    assert protection.cached_room_of_sale(sale_id=flight.pk) == sale.pk
    with django_assert_num_queries(0):
        assert protection.cached_room_of_sale(sale_id=flight.pk) == sale.pk


def test_protecting_a_flight_turns_holds_away_at_once(room_redis):
    flight = small_flight(rows=4)
    api = client_for(UserFactory())
    assert hold(api, flight, "1A").status_code == 201  # "unprotected" is cached now

    sale = protect(flight)
    refused = hold(api, flight, "1B")
    assert refused.status_code == 403, refused.json()
    assert refused.json()["type"].endswith("/waiting-room-required")
    assert refused.json()["queueUrl"] == f"/waiting-room/{sale.pk}/"
    assert Booking.objects.filter(sale_id=flight.sale_id).count() == 1


def test_removing_the_waiting_room_lets_holds_through_again(room_redis):
    flight = small_flight(rows=4)
    sale = protect(flight)
    api = client_for(UserFactory())
    assert hold(api, flight, "1A").status_code == 403  # "protected" is cached now

    WaitingRoom.objects.get(pk=sale.pk).delete()
    assert hold(api, flight, "1A").status_code == 201


def test_moving_a_waiting_room_to_another_flight_is_seen_on_both(room_redis):
    old, new = small_flight(), small_flight()
    sale = protect(old)
    assert protection.cached_room_of_sale(sale_id=old.pk) == sale.pk
    assert protection.cached_room_of_sale(sale_id=new.pk) is None

    moved = WaitingRoom.objects.get(pk=sale.pk)
    moved.sale_id = new.sale_id
    moved.save()  # what the admin does
    assert protection.cached_room_of_sale(sale_id=old.pk) is None
    assert protection.cached_room_of_sale(sale_id=new.pk) == sale.pk


def test_deleting_the_sale_forgets_its_waiting_room():
    # The room names only the engine's sale (issue 25): it goes with the sale, after its flight.
    flight = small_flight()
    protect(flight)
    generation = cache.get(protection.GENERATION_KEY)
    sale = flight.sale
    flight.delete()
    sale.delete()  # CASCADE
    assert cache.get(protection.GENERATION_KEY) != generation


def test_a_reader_that_read_before_the_change_cannot_store_a_stale_answer(monkeypatch):
    """The reader looks at the database, the waiting room is created and committed, then the
    reader stores what it saw ("unprotected").  That entry must be dead on arrival."""
    flight = small_flight()
    protection.cached_room_of_sale(sale_id=small_flight().pk)  # a generation
    real_read = protection.room_of_sale
    created = []

    def read_then_someone_protects(*, sale_id):
        answer = real_read(sale_id=sale_id)  # None: not protected yet
        created.append(protect(flight))  # commits (and retires answers) before we store
        return answer

    monkeypatch.setattr(protection, "room_of_sale", read_then_someone_protects)
    assert protection.cached_room_of_sale(sale_id=flight.pk) is None
    monkeypatch.setattr(protection, "room_of_sale", real_read)

    assert protection.cached_room_of_sale(sale_id=flight.pk) == created[0].pk


def test_the_admission_tick_saving_its_clock_keeps_the_answers():
    flight = small_flight()
    t0 = timezone.now() - timedelta(seconds=2)
    sale = protect(flight, opens_at=t0)
    assert protection.cached_room_of_sale(sale_id=flight.pk) == sale.pk
    generation = cache.get(protection.GENERATION_KEY)
    admission.admit_shoppers(room_id=sale.pk, now=t0)  # the shuffle saves the sale's clock fields
    admission.admit_shoppers(room_id=sale.pk, now=timezone.now())
    assert WaitingRoom.objects.get(pk=sale.pk).shuffled_at is not None
    assert cache.get(protection.GENERATION_KEY) == generation


def test_without_the_cache_the_database_answers(settings, django_assert_num_queries):
    settings.CACHES = {
        "default": {
            **settings.CACHES["default"],
            "LOCATION": "redis://127.0.0.1:1/0",  # nobody listens there
        }
    }
    flight = small_flight()
    sale = protect(flight)
    with django_assert_num_queries(1):
        assert protection.cached_room_of_sale(sale_id=flight.pk) == sale.pk
    with django_assert_num_queries(1):
        assert protection.cached_room_of_sale(sale_id=flight.pk) == sale.pk
