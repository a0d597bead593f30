"""The waitlist from the pages: join from a sold-out fare class (search results or picker),
see your place and leave from "My bookings", and pay an offer once seats free up (the offer
shows on the next load of "My bookings")."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.lifecycle import cancel_hold
from bookings.models import Booking, BookingStatus, WaitlistEntry, WaitlistStatus
from bookings.waitlist import join_waitlist
from flights.models import Seat
from flights.services import check_inventory
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


@pytest.fixture
def sold_out():
    """6 economy seats, no overbooking, every seat held by its own customer."""
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    holds = []
    for seat in Seat.objects.filter(sale=flight.sale).order_by("letter"):
        holder = UserFactory()
        holds.append(
            hold_seats(
                customer=holder,
                sale_id=flight.sale_id,
                fare_class="ECONOMY",
                seat_numbers=[seat.seat_no],
            )
        )
    flight.holds = holds
    return flight


def join(client, flight, party="2", fare="ECONOMY", follow=True, **extra):
    return client.post(
        reverse("waitlist:join", args=[flight.pk]),
        {"fare_class": fare, "party_size": party, **extra},
        follow=follow,
    )


def test_search_and_picker_offer_the_waitlist_on_a_sold_out_fare(client, customer, sold_out):
    local_day = sold_out.departure_at.astimezone(ZoneInfo("Asia/Ho_Chi_Minh")).date()
    client.force_login(customer)
    search = client.get(
        reverse("flights:search"),
        {"origin": "SGN", "destination": "HAN", "date": local_day.isoformat(), "passengers": 2},
    )
    html = search.content.decode()
    assert "Sold out" in html
    assert reverse("waitlist:join", args=[sold_out.pk]) in html and "Join waitlist" in html
    picker = client.get(
        reverse("flights:seat_picker", args=[sold_out.pk]) + "?fare=ECONOMY&passengers=2"
    )
    assert b"is sold out" in picker.content and b"Join waitlist" in picker.content


def test_a_fare_with_seats_left_offers_no_waitlist(client, customer, flight):
    client.force_login(customer)
    picker = client.get(
        reverse("flights:seat_picker", args=[flight.pk]) + "?fare=ECONOMY&passengers=2"
    )
    assert b"Join waitlist" not in picker.content


def test_join_shows_the_position_and_leave_removes_it(client, customer, sold_out):
    join_waitlist(
        customer=UserFactory(), sale_id=sold_out.sale_id, fare_class="ECONOMY", party_size=1
    )
    client.force_login(customer)

    joined = join(client, sold_out)

    assert joined.redirect_chain[-1][0] == reverse("bookings:mine") + "#waitlist"
    assert any("number 2 on the waitlist" in m for m in messages_of(joined))
    entry = WaitlistEntry.objects.get(customer=customer)
    assert (entry.status, entry.party_size) == (WaitlistStatus.WAITING, 2)
    assert b"number 2</strong> in line" in joined.content
    assert reverse("waitlist:leave", args=[sold_out.pk]).encode() in joined.content

    again = join(client, sold_out)
    assert any(m.startswith("Already on the waitlist") for m in messages_of(again))
    assert WaitlistEntry.objects.filter(customer=customer).count() == 1

    left = client.post(
        reverse("waitlist:leave", args=[sold_out.pk]), {"fare_class": "ECONOMY"}, follow=True
    )
    assert any("left the waitlist" in m for m in messages_of(left))
    entry.refresh_from_db()
    assert entry.status == WaitlistStatus.LEFT
    assert b"in line" not in left.content

    twice = client.post(
        reverse("waitlist:leave", args=[sold_out.pk]), {"fare_class": "ECONOMY"}, follow=True
    )
    assert any(m.startswith("Not on the waitlist") for m in messages_of(twice))


@pytest.mark.parametrize(
    ("form", "text"),
    [
        ({"party": "0"}, "greater than or equal to 1"),
        ({"party": "10"}, "at most 9 passengers"),
        ({"party": "two"}, "whole number"),
        ({"fare": "FIRST"}, "valid choice"),
    ],
)
def test_bad_join_input_shows_a_message_and_changes_nothing(client, customer, sold_out, form, text):
    client.force_login(customer)
    response = join(client, sold_out, **form)
    assert any(text in m for m in messages_of(response)), messages_of(response)
    assert WaitlistEntry.objects.count() == 0


def test_joining_a_fare_with_seats_left_says_book_directly(client, customer):
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    client.force_login(customer)
    response = join(client, flight)
    assert any(m.startswith("Seats are available") for m in messages_of(response))
    assert WaitlistEntry.objects.count() == 0


def test_join_goes_back_to_the_page_it_came_from_but_never_off_site(client, customer, sold_out):
    client.force_login(customer)
    picker = reverse("flights:seat_picker", args=[sold_out.pk]) + "?fare=ECONOMY&passengers=9"
    bad = join(client, sold_out, party="x", follow=False, next=picker)
    assert bad.url == picker
    off_site = join(client, sold_out, party="x", follow=False, next="https://evil.example/")
    assert off_site.url == reverse("flights:search")


def test_anonymous_join_and_leave_go_to_login_and_change_nothing(client, sold_out):
    response = join(client, sold_out, follow=False)
    assert response.status_code == 302 and response.url.startswith(reverse("login"))
    leave = client.post(reverse("waitlist:leave", args=[sold_out.pk]), {"fare_class": "ECONOMY"})
    assert leave.status_code == 302 and leave.url.startswith(reverse("login"))
    assert WaitlistEntry.objects.count() == 0


def test_an_offer_shows_in_my_bookings_with_a_pay_link(client, customer, sold_out):
    client.force_login(customer)
    join(client, sold_out, party="1")
    first = sold_out.holds[0]
    cancel_hold(customer=first.customer, booking_id=first.pk)

    mine = client.get(reverse("bookings:mine"))

    entry = WaitlistEntry.objects.get(customer=customer)
    assert entry.status == WaitlistStatus.OFFERED
    offer = entry.offer
    html = mine.content.decode()
    assert "Seats are held for you" in html and "Pay for your offered seats" in html
    assert reverse("bookings:detail", args=[offer.pk]) in html
    page = client.get(reverse("bookings:detail", args=[offer.pk]))
    # An offer arrives without names: they are asked for before Pay appears (issue 15).
    assert b'id="names-form"' in page.content and b"Your seats are held" in page.content
    assert b'id="pay-form"' not in page.content
    client.post(reverse("bookings:names", args=[offer.pk]), {"names": ["Wei Zhang"]})
    page = client.get(reverse("bookings:detail", args=[offer.pk]))
    assert b'id="pay-form"' in page.content and b'id="names-form"' not in page.content
    assert offer.passengers.get().full_name == "Wei Zhang"
    assert offer.passengers.get().seat.seat_no == first.passengers.get().seat.seat_no
    assert check_inventory(sale_id=sold_out.sale_id) == []


def test_others_cannot_see_or_leave_my_entry(client, customer, other_customer, sold_out):
    join_waitlist(customer=customer, sale_id=sold_out.sale_id, fare_class="ECONOMY", party_size=1)
    client.force_login(other_customer)
    assert b"in line" not in client.get(reverse("bookings:mine")).content
    response = client.post(
        reverse("waitlist:leave", args=[sold_out.pk]), {"fare_class": "ECONOMY"}, follow=True
    )
    assert any(m.startswith("Not on the waitlist") for m in messages_of(response))
    assert WaitlistEntry.objects.get().status == WaitlistStatus.WAITING


def test_an_expired_offer_no_longer_shows_as_payable(client, customer, sold_out):
    client.force_login(customer)
    join(client, sold_out, party="1")
    first = sold_out.holds[0]
    cancel_hold(customer=first.customer, booking_id=first.pk)
    offer = WaitlistEntry.objects.get(customer=customer).offer
    Booking.objects.filter(pk=offer.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    page = client.get(reverse("bookings:detail", args=[offer.pk]))
    assert b'id="pay-form"' not in page.content and b"Your hold has expired" in page.content
    assert Booking.objects.get(pk=offer.pk).status == BookingStatus.HELD  # the sweep decides


def test_waitlist_state_changes_when_an_offer_arrives(client, customer, sold_out):
    client.force_login(customer)
    join(client, sold_out, party="1")
    page = client.get(reverse("bookings:mine"))
    before = client.get(reverse("waitlist:state")).json()["state"]
    assert f'data-state="{before}"' in page.text and "WAITING" in before
    cancel_hold(customer=sold_out.holds[0].customer, booking_id=sold_out.holds[0].pk)
    after = client.get(reverse("waitlist:state")).json()["state"]
    assert after != before and "OFFERED" in after


def test_waitlist_state_needs_login(client):
    response = client.get(reverse("waitlist:state"))
    assert response.status_code == 302 and "login" in response["Location"]
