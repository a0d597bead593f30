"""Redis is only a fast filter: with it gone, seats are still held (and never twice)."""

import pytest
from rest_framework.test import APIClient

from bookings.models import Booking
from flights.models import Seat, SeatStatus
from flights.services import check_inventory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

DEAD_REDIS = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture
def redis_gone(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": DEAD_REDIS,
            "OPTIONS": {
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": 0.2,
                "SOCKET_TIMEOUT": 0.2,
            },
        }
    }
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [DEAD_REDIS]},
        }
    }
    # Django's setting_changed handler rebuilds the cache connections from the new setting.
    yield


def test_holds_and_seat_maps_work_without_redis_and_never_double_sell(redis_gone, flight):
    from django.core.cache import cache

    cache.set("probe", 1)
    assert cache.get("probe") is None  # really no Redis behind the cache
    alice, bob = UserFactory(), UserFactory()
    first, second = APIClient(), APIClient()
    first.force_authenticate(alice)
    second.force_authenticate(bob)

    seat_map = first.get(f"/api/flights/{flight.pk}/seats")
    assert seat_map.status_code == 200
    body = {
        "flightId": flight.pk,
        "fareClass": "ECONOMY",
        "seats": ["12A"],
        "exitRowConfirmed": True,
    }
    won = first.post("/api/bookings", body, format="json")
    lost = second.post("/api/bookings", body, format="json")
    assert won.status_code == 201, won.content
    assert lost.status_code == 409
    assert Seat.objects.get(sale=flight.sale, seat_no="12A").status == SeatStatus.HELD
    assert Booking.objects.count() == 1
    assert check_inventory(sale_id=flight.sale_id) == []
