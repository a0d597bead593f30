"""An event's sale on the engine: opened from a snapshot of the venue plan when the event goes
on sale, and sold by the engine's one hold path (seats by number, standing areas by count)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from bookings import catalogue
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import SaleClosed, SeatNotFound, SoldOut
from bookings.models import BookingStatus, Inventory, SaleKind, Seat, SeatStatus
from events.models import EventStatus, VenueSeat
from events.services import cancel_event, open_missing_sale
from tests.events.factories import EventFactory

pytestmark = pytest.mark.django_db


def test_a_draft_has_no_sale_and_going_on_sale_opens_one_from_the_plan():
    draft = EventFactory(publish=False)
    assert draft.sale_id is None

    event = EventFactory()

    assert event.sale.kind == SaleKind.EVENT
    classes = {
        i.fare_class: (i.capacity, i.overbook_limit, i.price)
        for i in Inventory.objects.filter(sale=event.sale)
    }
    # Stalls rows 1-2 (12 seats) are A; rows 3-4 (12) and the balcony (10) are B; the
    # standing floor (section 3 in drawing order) is sold by count at GA's price.
    assert classes == {
        "A": (12, 0, Decimal("80.00")),
        "B": (22, 0, Decimal("45.00")),
        "GA-3": (50, 0, Decimal("30.00")),
    }
    assert (
        Seat.objects.filter(sale=event.sale).count()
        == VenueSeat.objects.filter(section__venue=event.venue).count()
    )
    seat = Seat.objects.get(sale=event.sale, seat_no="2-B-5")
    assert (seat.section, seat.row_label, seat.number, seat.fare_class) == ("Balcony", "B", 5, "B")
    assert seat.restricted_view is True
    assert Seat.objects.get(sale=event.sale, seat_no="1-4-1").accessible is True


def test_the_catalogue_is_registered_and_describes_the_event():
    event = EventFactory()
    assert catalogue.sale_id_for(SaleKind.EVENT, event.pk) == event.sale_id
    assert catalogue.sale_id_for(SaleKind.EVENT, 10**9) is None
    summary = catalogue.describe(event.sale)
    assert summary.title == event.name
    assert summary.starts_at == event.starts_at
    assert summary.time_zone == "Europe/Berlin"
    assert event.venue.name in summary.place
    assert catalogue.is_seat_no("1-4-12") and catalogue.is_seat_no("12A")


def test_seats_and_standing_places_are_held_through_the_engine(customer):
    event = EventFactory()

    seated = hold_seats(
        customer=customer, sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-2", "1-1-1"]
    )
    standing = hold_seatless(
        customer=customer, sale_id=event.sale_id, fare_class="GA-3", passengers=2
    )

    assert seated.status == BookingStatus.HELD
    assert seated.amount == Decimal("160.00")
    assert set(Seat.objects.filter(booking=seated).values_list("seat_no", flat=True)) == {
        "1-1-1",
        "1-1-2",
    }
    assert standing.amount == Decimal("60.00")
    assert Inventory.objects.get(sale=event.sale, fare_class="GA-3").held == 2
    assert Seat.objects.get(sale=event.sale, seat_no="1-1-1").status == SeatStatus.HELD


def test_engine_errors_speak_of_the_event_not_a_flight(customer):
    event = EventFactory()
    with pytest.raises(SeatNotFound) as missing:
        hold_seats(customer=customer, sale_id=event.sale_id, fare_class="A", seat_numbers=["1-9-1"])
    assert "flight" not in missing.value.detail
    assert "event" in missing.value.detail

    Inventory.objects.filter(sale=event.sale, fare_class="GA-3").update(capacity=1)
    with pytest.raises(SoldOut) as sold_out:
        hold_seatless(customer=customer, sale_id=event.sale_id, fare_class="GA-3", passengers=2)
    assert "flight" not in sold_out.value.detail


def test_nothing_is_held_before_the_on_sale_time_or_once_cancelled(customer):
    soon = EventFactory(on_sale_at=timezone.now() + timedelta(hours=2))
    with pytest.raises(SaleClosed) as early:
        hold_seats(customer=customer, sale_id=soon.sale_id, fare_class="A", seat_numbers=["1-1-1"])
    assert "not on sale yet" in early.value.detail
    assert "flight" not in str(early.value.title).lower()

    event = EventFactory()
    cancel_event(event_id=event.pk)
    with pytest.raises(SaleClosed) as cancelled:
        hold_seatless(customer=customer, sale_id=event.sale_id, fare_class="GA-3", passengers=1)
    assert "cancelled" in cancelled.value.detail


def test_later_plan_or_price_changes_do_not_change_the_sale():
    event = EventFactory()
    event.price_categories.filter(code="A").update(price=Decimal("999.00"))
    VenueSeat.objects.filter(section__venue=event.venue).update(accessible=True)
    assert Inventory.objects.get(sale=event.sale, fare_class="A").price == Decimal("80.00")
    assert Seat.objects.filter(sale=event.sale, accessible=True).count() == 2


def test_an_event_published_before_events_were_sold_gets_its_sale_once():
    event = EventFactory()
    sale_id = event.sale_id
    assert open_missing_sale(event_id=event.pk) is False  # it has one already
    type(event).objects.filter(pk=event.pk).update(sale=None)
    assert open_missing_sale(event_id=event.pk) is True
    event.refresh_from_db()
    assert event.sale_id not in (None, sale_id)
    assert event.status == EventStatus.ON_SALE
