"""Issue 31 (polish, open point (a)): the API's airports speak the client's language, as its
problems do.  `Accept-Language` picks it; the fields stay `name` and `city`, in that language
where the airport has a local name, else English; `Content-Language` says which, and
`Vary: Accept-Language` keeps shared caches apart.  Search (cached per language) and one
flight answer the same names."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from tests.api.conftest import client_for
from tests.factories import AirportFactory, FlightFactory, moscow_to_petersburg_flight

pytestmark = pytest.mark.django_db

NAMES = {
    "en": ("Moscow", "Sheremetyevo International", "Saint Petersburg", "Pulkovo"),
    "de": ("Moskau", "Internationaler Flughafen Scheremetjewo", "Sankt Petersburg",
           "Flughafen Pulkowo"),
    "ru": ("Москва", "Международный аэропорт Шереметьево", "Санкт-Петербург",
           "Аэропорт Пулково"),
}  # fmt: skip


@pytest.fixture
def flight():
    return moscow_to_petersburg_flight(departure_at=timezone.now() + timedelta(days=3))


def names(answer: dict) -> tuple[str, str, str, str]:
    origin, destination = answer["origin"], answer["destination"]
    return origin["city"], origin["name"], destination["city"], destination["name"]


def search(client, flight, accept_language: str | None):
    day = flight.departure_at.astimezone(ZoneInfo("Europe/Moscow")).date()
    headers = {"HTTP_ACCEPT_LANGUAGE": accept_language} if accept_language else {}
    return client.get(
        "/api/flights", {"from": "SVO", "to": "LED", "date": day.isoformat()}, **headers
    )


@pytest.mark.parametrize(
    ("accept_language", "language"),
    [("de-DE,de;q=0.9,en;q=0.5", "de"), ("ru", "ru"), ("en-US", "en"), (None, "en")],
)
def test_search_and_one_flight_name_airports_in_the_clients_language(
    flight, accept_language, language
):
    client = client_for()
    found = search(client, flight, accept_language)
    assert found.status_code == 200
    assert [names(f) for f in found.json()] == [NAMES[language]]
    assert found["Content-Language"] == language
    assert "Accept-Language" in found["Vary"]
    headers = {"HTTP_ACCEPT_LANGUAGE": accept_language} if accept_language else {}
    one = client.get(f"/api/flights/{flight.pk}", **headers)
    assert names(one.json()) == NAMES[language] and one["Content-Language"] == language
    # The codes, countries and zones are the same in every language.
    assert one.json()["origin"]["code"] == "SVO" and one.json()["origin"]["country"] == "RU"


def test_the_cached_search_is_kept_per_language(flight):
    """Control for the cache key: a German search cached first must not answer the Russian
    and English clients in German (nor their ETags match)."""
    client = client_for()
    german = search(client, flight, "de")
    russian, english = search(client, flight, "ru"), search(client, flight, "en")
    assert names(german.json()[0])[0] == "Moskau"
    assert names(russian.json()[0])[0] == "Москва" and names(english.json()[0])[0] == "Moscow"
    assert len({german["ETag"], russian["ETag"], english["ETag"]}) == 3
    client.get(f"/api/flights/{flight.pk}", HTTP_ACCEPT_LANGUAGE="de")
    assert (
        client.get(f"/api/flights/{flight.pk}", HTTP_ACCEPT_LANGUAGE="ru").json()["origin"]["city"]
        == "Москва"
    )


def test_control_an_airport_without_local_names_answers_english_in_every_language():
    flight = FlightFactory(
        origin=AirportFactory(code="MUC", name="Munich", city="Munich", country="DE",
                              time_zone="Europe/Berlin"),
        destination=AirportFactory(code="FRA", name="Frankfurt", city="Frankfurt",
                                   country="DE", time_zone="Europe/Berlin"),
    )  # fmt: skip
    one = client_for().get(f"/api/flights/{flight.pk}", HTTP_ACCEPT_LANGUAGE="de")
    assert names(one.json()) == ("Munich", "Munich", "Frankfurt", "Frankfurt")
    assert one["Content-Language"] == "de"
