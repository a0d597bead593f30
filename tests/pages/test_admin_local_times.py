"""Issue 31, item 12: staff type and read times in admin as the clock at the venue or the
airport, with the zone named, on forms, lists, read-only panels and confirmations."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from events.models import Event
from events.services import AssignmentSpec, assign_categories, put_event_on_sale
from flights.models import OnlineCheckIn
from tests.events.factories import EventFactory, VenueFactory
from tests.events.test_event_admin import _event_form
from tests.factories import AirportFactory, FlightFactory
from waitroom.staff import open_waiting_room

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
SAIGON = ZoneInfo("Asia/Ho_Chi_Minh")


@pytest.fixture
def staff(client, staff_user):
    client.force_login(staff_user)
    return client


def test_an_event_entered_at_20_00_in_berlin_starts_at_20_00_berlin_for_customers(staff):
    venue = VenueFactory(time_zone="Europe/Berlin")
    staff.post(reverse("admin:events_event_add"), _event_form(venue), follow=True)
    event = Event.objects.get()
    assert event.starts_at.astimezone(BERLIN).strftime("%H:%M") == "20:00"
    assert event.on_sale_at.astimezone(BERLIN).strftime("%H:%M") == "10:00"

    change = staff.get(reverse("admin:events_event_change", args=[event.pk])).content.decode()
    assert 'name="starts_at_1" value="20:00:00"' in change
    assert "Europe/Berlin" in change  # the zone is named on the form

    event.on_sale_at = timezone.now() - timedelta(hours=1)
    event.save(update_fields=["on_sale_at"])
    assign_categories(
        event_id=event.pk,
        assignments=[
            AssignmentSpec("A", "Stalls"),
            AssignmentSpec("A", "Balcony"),
            AssignmentSpec("GA", "Floor"),
        ],
    )
    put_event_on_sale(event_id=event.pk)
    customer_page = staff.get(reverse("events:detail", args=[event.pk])).content.decode()
    assert "20:00" in customer_page and "21:00" not in customer_page


def test_an_unchanged_save_of_a_draft_keeps_its_time(staff):
    venue = VenueFactory(time_zone="Europe/Berlin")
    staff.post(reverse("admin:events_event_add"), _event_form(venue), follow=True)
    event = Event.objects.get()
    before = event.starts_at
    form = _event_form(venue, **{"price_categories-TOTAL_FORMS": 0})
    form["starts_at_0"] = before.astimezone(BERLIN).strftime("%Y-%m-%d")
    form["on_sale_at_0"] = event.on_sale_at.astimezone(BERLIN).strftime("%Y-%m-%d")
    staff.post(reverse("admin:events_event_change", args=[event.pk]), form, follow=True)
    event.refresh_from_db()
    assert event.starts_at == before


def test_a_published_event_and_its_call_off_confirmation_show_berlin_time(staff):
    starts = datetime(2031, 6, 12, 20, 0, tzinfo=BERLIN)
    event = EventFactory(starts_at=starts, venue=VenueFactory(time_zone="Europe/Berlin"))
    page = staff.get(reverse("admin:events_event_change", args=[event.pk])).content.decode()
    assert "Concert" in page and "(2031-06-12 20:00 CEST)" in page  # its title
    assert "June 12, 2031, 8 p.m." in page  # the read-only start, in Berlin
    assert "local times at the place: Europe/Berlin (CE" in page
    listing = staff.get(reverse("admin:events_event_changelist")).content.decode()
    assert "2031-06-12 20:00 CEST" in listing
    confirm = staff.post(
        reverse("admin:events_event_changelist"),
        {"action": "cancel", "_selected_action": [event.pk]},
    ).content.decode()
    assert "2031-06-12 20:00 CEST" in confirm and "Europe/Berlin" in confirm


def test_a_07_00_local_flight_shows_07_00_in_admin(staff):
    departs = datetime(2031, 3, 1, 7, 0, tzinfo=SAIGON)  # 00:00 UTC
    flight = FlightFactory(
        departure_at=departs,
        arrival_at=departs + timedelta(hours=2),
        origin=AirportFactory(code="SGN", time_zone="Asia/Ho_Chi_Minh"),
        destination=AirportFactory(code="FRA", time_zone="Europe/Berlin"),
    )
    url = reverse("admin:flights_flight_change", args=[flight.pk])
    page = staff.get(url).content.decode()
    assert 'name="departure_at_1" value="07:00:00"' in page
    assert 'name="arrival_at_1" value="03:00:00"' in page  # 02:00 UTC is 03:00 in Frankfurt
    assert "Asia/Ho_Chi_Minh" in page and "Europe/Berlin" in page
    listing = staff.get(reverse("admin:flights_flight_changelist")).content.decode()
    assert "2031-03-01 07:00 +07" in listing


def test_a_flight_added_at_07_00_departs_07_00_at_its_origin(staff):
    AirportFactory(code="SGN", time_zone="Asia/Ho_Chi_Minh")
    AirportFactory(code="FRA", time_zone="Europe/Berlin")
    day = (timezone.now() + timedelta(days=30)).strftime("%Y-%m-%d")
    staff.post(
        reverse("admin:flights_flight_add"),
        {
            "code": "SK77",
            "origin": "SGN",
            "destination": "FRA",
            "departure_at_0": day,
            "departure_at_1": "07:00",
            "arrival_at_0": day,
            "arrival_at_1": "18:00",
            "status": "SCHEDULED",
            "exit_rows": "12, 13",
            "sale-TOTAL_FORMS": 0,
            "sale-INITIAL_FORMS": 0,
            "inventories-TOTAL_FORMS": 0,
            "inventories-INITIAL_FORMS": 0,
        },
        follow=True,
    )
    from flights.models import Flight

    flight = Flight.objects.get(code="SK77")
    assert flight.departure_at.astimezone(SAIGON).strftime("%H:%M") == "07:00"
    assert flight.arrival_at.astimezone(ZoneInfo("Europe/Berlin")).strftime("%H:%M") == "18:00"
    assert flight.exit_rows == [12, 13]


def test_the_waiting_room_opens_in_the_venue_zone_and_says_so(staff, settings):
    event = EventFactory(venue=VenueFactory(time_zone="Europe/Berlin"))
    opens = datetime(2031, 1, 5, 9, 0, tzinfo=BERLIN)
    room = open_waiting_room(
        sale_id=event.sale_id, opens_at=opens, admit_per_minute=60, max_inside=10
    )
    listing = staff.get(reverse("admin:waitroom_waitingroom_changelist")).content.decode()
    assert "2031-01-05 09:00 CET" in listing
    page = staff.get(reverse("admin:waitroom_waitingroom_change", args=[room.pk]))
    assert 'name="opens_at_1" value="09:00:00"' in page.content.decode()
    assert event.name in page.content.decode()  # the sale is named, not a raw id


def test_a_flight_is_named_by_its_local_departure_on_its_page_and_wherever_it_is_listed(staff):
    """Its title, breadcrumbs and every admin column naming it (the seats' list) say the
    origin's clock with the zone, as its form does: not "2031-03-01 00:00Z"."""
    departs = datetime(2031, 3, 1, 7, 0, tzinfo=SAIGON)  # 00:00 UTC
    flight = FlightFactory(
        code="VN1",
        departure_at=departs,
        arrival_at=departs + timedelta(hours=2),
        origin=AirportFactory(code="SGN", time_zone="Asia/Ho_Chi_Minh"),
    )
    assert str(flight) == f"VN1 SGN→{flight.destination_id} 2031-03-01 07:00 +07"
    page = staff.get(reverse("admin:flights_flight_change", args=[flight.pk])).content.decode()
    assert f"<title>{flight!s}" in page and "00:00Z" not in page
    seats = staff.get(reverse("admin:flights_seat_changelist")).content.decode()
    assert "2031-03-01 07:00 +07" in seats and "00:00Z" not in seats


def test_the_waiting_rooms_live_panel_tells_the_time_at_the_place(staff, settings):
    event = EventFactory(venue=VenueFactory(time_zone="Europe/Berlin"))
    room = open_waiting_room(
        sale_id=event.sale_id,
        opens_at=timezone.now() + timedelta(hours=1),
        admit_per_minute=60,
        max_inside=10,
    )
    url = reverse("admin:waitroom_waitingroom_panel", args=[room.pk])
    page = staff.get(url).content.decode()
    figures = staff.get(url + "figures/").json()

    now_in_berlin = timezone.now().astimezone(BERLIN)
    assert "Europe/Berlin (CE" in figures["atLocal"]
    assert figures["atLocal"].startswith(f"{now_in_berlin:%Y-%m-%d %H}")
    assert 'id="fig-at" aria-live="off">' + f"{now_in_berlin:%Y-%m-%d %H}" in page
    assert figures["at"].endswith("Z"), "the JSON's own instant stays UTC for scripts"


def test_the_departure_panel_tells_check_in_times_at_the_origin(client):
    """The day of departure's panel (FRA, Europe/Berlin): its title and its check-in times
    are Frankfurt's clock with the zone named, not UTC."""
    from tests.flights.oversold import oversold_flight
    from tests.flights.test_departure_panel import clerk_with, panel_url

    flight, _later, tickets = oversold_flight()
    checked_in = (
        OnlineCheckIn.objects.get(passenger_id=tickets[0].passenger_id)
        .checked_in_at.astimezone(BERLIN)
        .strftime("%Y-%m-%d %H:%M:%S")
    )
    client.force_login(clerk_with())
    page = client.get(panel_url(flight)).content.decode()

    assert f"{checked_in} CE" in page  # CET or CEST
    assert str(flight) in page and "UTC" not in page
