"""Issue 31, item 7: a refused hold names the seat as people do ("Stalls, row 1, seat 1",
not "1-1-1") and the picker comes back with the names the shopper typed."""

from __future__ import annotations

import pytest

from bookings.customer_holds import hold_seats
from tests.events.factories import EventFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_an_event_seat_just_taken_is_named_and_the_name_kept(client, customer):
    event = EventFactory()
    hold_seats(
        customer=UserFactory(),
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=["1-1-1"],
        passenger_names=["First"],
    )
    client.force_login(customer)
    page = client.post(
        f"/events/{event.pk}/hold/",
        {"seats": ["1-1-1", "1-1-2"], "category": "A", "name": "Ada Lovelace"},
        follow=True,
    )
    said = " ".join(messages_of(page))
    assert "Stalls, row 1, seat 1 was just taken by someone else" in said, said
    assert "1-1-1" not in said
    assert 'id="ticket-name" name="name" type="text" maxlength="120" value="Ada Lovelace"' in (
        page.content.decode()
    )
    again = client.get(f"/events/{event.pk}/").content.decode()
    assert 'value="Ada Lovelace"' not in again  # kept for the one page after the refusal


def test_a_flight_seat_just_taken_is_named_and_the_names_kept(client, customer, flight):
    hold_seats(
        customer=UserFactory(),
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=["12A"],
        passenger_names=["First"],
    )
    client.force_login(customer)
    page = client.post(
        f"/flights/{flight.pk}/hold/",
        {
            "fare_class": "ECONOMY",
            "passengers": 2,
            "seats": ["12A", "12B"],
            "names": ["Ada Lovelace", "Alan Turing"],
            "exit_row_confirmed": "on",  # row 12 is an exit row
        },
        follow=True,
    )
    said = " ".join(messages_of(page))
    assert "Seat 12A was just taken by someone else. Please pick another seat." in said, said
    html = page.content.decode()
    assert 'id="name-1" name="names" type="text" maxlength="120" value="Ada Lovelace"' in html
    assert 'id="name-2" name="names" type="text" maxlength="120" value="Alan Turing"' in html
