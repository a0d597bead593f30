"""The pages that list bookings reach each sale's catalogue item, and what its description
reads, through the catalogue registry (bookings.catalogue.owner_paths and detail_paths), not through
`sale__flight__...` strings of their own."""

from __future__ import annotations

import pytest
from django.urls import reverse

from bookings import catalogue
from bookings.customer_holds import hold_seats
from tests.events.factories import EventFactory
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db


def test_the_paths_name_each_item_and_what_its_description_reads():
    paths = catalogue.owner_paths("sale__") + catalogue.detail_paths("sale__")
    assert sorted(paths) == [
        "sale__event",
        "sale__flight",
        "sale__flight__destination",
        "sale__flight__origin",
    ]


def test_my_bookings_names_flights_and_events_without_a_query_per_booking(
    client, customer, django_assert_max_num_queries
):
    client.force_login(customer)
    event = EventFactory()
    hold_seats(customer=customer, sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-1"])
    flight = FlightFactory()
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["30F"]
    )
    with django_assert_max_num_queries(40) as one_of_each:
        page = client.get(reverse("bookings:mine"))
    assert page.status_code == 200 and flight.code in page.content.decode()

    for _ in range(3):
        other = FlightFactory()
        hold_seats(
            customer=customer, sale_id=other.sale_id, fare_class="ECONOMY", seat_numbers=["30F"]
        )
    with django_assert_max_num_queries(len(one_of_each.captured_queries)):
        assert client.get(reverse("bookings:mine")).status_code == 200
