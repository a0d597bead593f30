"""API problem `title` and `detail` in the language the client asks for (Accept-Language)."""

import pytest

from bookings.customer_holds import hold_seats
from tests.api.conftest import GOOD_CARD, client_for
from tests.events.factories import EventFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def hold(client, flight, seats, language):
    return client.post(
        "/api/bookings",
        {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": seats, "exitRowConfirmed": True},
        format="json",
        HTTP_ACCEPT_LANGUAGE=language,
    )


@pytest.mark.parametrize(
    ("language", "title", "detail"),
    [
        ("en", "Seat just taken", "Seat 12A was just taken by someone else. Please pick another."),
        (
            "de-DE,de;q=0.9,en;q=0.5",
            "Platz gerade vergeben",
            "Platz 12A wurde gerade von jemand anderem belegt. Bitte wählen Sie einen anderen.",
        ),
        (
            "ru",
            "Место только что заняли",
            "Место 12A только что занял кто-то другой. Пожалуйста, выберите другое.",
        ),
    ],
)
def test_a_domain_problem_speaks_the_clients_language(customer, flight, language, title, detail):
    hold_seats(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    response = hold(client_for(customer), flight, ["12A"], language)
    assert response.status_code == 409
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert (body["title"], body["detail"]) == (title, detail)
    assert body["type"].endswith("/seat-unavailable")  # the machine-readable part never changes


@pytest.mark.parametrize(
    ("language", "title", "detail"),
    [
        ("en", "Booking not found", "You have no booking 999999."),
        ("de", "Buchung nicht gefunden", "Sie haben keine Buchung 999999."),
        ("ru", "Бронирование не найдено", "У вас нет бронирования 999999."),
    ],
)
def test_not_found_problem_in_each_language(customer, language, title, detail):
    response = client_for(customer).get("/api/bookings/999999", HTTP_ACCEPT_LANGUAGE=language)
    body = response.json()
    assert response.status_code == 404
    assert (body["title"], body["detail"]) == (title, detail)


@pytest.mark.parametrize(
    ("language", "title"),
    [
        ("en", "Authentication required"),
        ("de", "Authentifizierung erforderlich"),
        ("ru", "Требуется аутентификация"),
    ],
)
def test_drf_problems_have_translated_titles(language, title):
    response = client_for().get("/api/bookings/1", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 401 and response.json()["title"] == title


@pytest.mark.parametrize(
    ("language", "title", "reason"),
    [
        ("en", "Invalid request", "At most 9 passengers can be booked together."),
        ("de", "Ungültige Anfrage", "Höchstens 9 Reisende können zusammen gebucht werden."),
        ("ru", "Некорректный запрос", "Вместе можно забронировать не более 9 пассажиров."),
    ],
)
def test_validation_problems_in_each_language(customer, flight, language, title, reason):
    seats = [f"{row}{letter}" for row in (20, 21) for letter in "ABCDEF"][:10]
    body = hold(client_for(customer), flight, seats, language).json()
    assert body["status"] == 400 and body["title"] == title
    assert body["invalidParams"][0]["reason"] == reason and reason in body["detail"]


@pytest.mark.parametrize(
    ("language", "detail"),
    [
        ("en", "No API endpoint at this address."),
        ("de", "Unter dieser Adresse gibt es keinen API-Endpunkt."),
        ("ru", "По этому адресу нет конечной точки API."),
    ],
)
def test_unknown_endpoint_problem_in_each_language(language, detail):
    response = client_for().get("/api/no-such-thing", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 404 and response.json()["detail"] == detail


@pytest.mark.parametrize(
    ("language", "title", "detail"),
    [
        ("en", "Event not found", "There is no event 999999."),
        ("de-DE,de;q=0.9", "Veranstaltung nicht gefunden", "Es gibt keine Veranstaltung 999999."),
        ("ru", "Мероприятие не найдено", "Мероприятия 999999 не существует."),
    ],
)
def test_unknown_event_problem_in_each_language(language, title, detail):
    response = client_for().get("/api/events/999999", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert (body["title"], body["detail"]) == (title, detail)
    assert body["type"].endswith("/event-not-found")


@pytest.mark.parametrize(
    ("language", "title", "detail"),
    [
        ("en", "Event not found", "There is no event {id}."),
        ("de", "Veranstaltung nicht gefunden", "Es gibt keine Veranstaltung {id}."),
        ("ru", "Мероприятие не найдено", "Мероприятия {id} не существует."),
    ],
)
def test_a_draft_event_is_not_found_in_each_language(language, title, detail):
    """A draft is as unknown to the public as a missing event, in the reader's language."""
    draft = EventFactory(publish=False, assignments=())
    response = client_for().get(f"/api/events/{draft.pk}", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 404
    body = response.json()
    assert (body["title"], body["detail"]) == (title, detail.format(id=draft.pk))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("language", "title", "who"),
    [
        ("en", "Passenger names missing", "passenger 1 (seat 14A), passenger 2 (seat 14B)"),
        (
            "de",
            "Namen der Reisenden fehlen",
            "Reisende(r) 1 (Platz 14A), Reisende(r) 2 (Platz 14B)",
        ),
        ("ru", "Не указаны имена пассажиров", "пассажир 1 (место 14A), пассажир 2 (место 14B)"),
    ],
)
def test_passenger_names_missing_in_each_language(
    sandbox_payments, customer, flight, language, title, who
):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["14A", "14B"]
    )
    response = client_for(customer).post(
        f"/api/bookings/{booking.pk}/payments",
        {"paymentMethod": GOOD_CARD},
        format="json",
        HTTP_IDEMPOTENCY_KEY="names-1",
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert response.status_code == 422
    body = response.json()
    assert body["title"] == title and who in body["detail"]
    assert f"/api/bookings/{booking.pk}/passengers" in body["detail"]
    assert body["type"].endswith("/passenger-names-missing")
