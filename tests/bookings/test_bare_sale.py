"""The engine on a bare Sale: no flight behind it, only a catalogue registered for its kind.

This is what a second catalogue (events) builds on: opening a sale with seats, a standing
area and no overbooking, then holding, expiring and taking over holds through the same
services the flights use, with the catalogue's own "is it open?" rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.db.models import Q
from django.utils import timezone

from bookings import catalogue
from bookings.audit import check_inventory
from bookings.catalogue import SaleSummary, SaleTexts
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import SaleClosed, SeatUnavailable, SoldOut
from bookings.inventory import ClassSpec, SeatSpec, open_sale
from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus, Inventory, Sale, SaleKind, Seat, SeatStatus
from kernel.errors import InvalidRequest

pytestmark = pytest.mark.django_db


CONCERT_TEXTS = SaleTexts(
    not_found="No concert %(id)s.",
    not_bookable_title="Concert closed",
    class_not_sold_title="No such category",
    class_not_sold="Concert %(id)s does not sell %(class)s.",
    no_such_seat="No such seat in the hall: %(seats)s.",
    sold_out="%(fare)s is sold out for this concert.",
    hold_limit="At most %(limit)d tickets per concert.",
    not_charged="The concert is over; nothing was charged.",
    refund_called_off="Called off: full refund.",
    refund_begun="It has begun.",
    refund_full="Full refund (%(days)d days).",
    refund_partial="%(percent)d%% refund (%(days)d days).",
    refund_none="No refund (%(hours)d hours).",
)


@dataclass
class ConcertHall:
    """A stand-in catalogue: a sale is open unless its id is in `closed`."""

    owner: str | None = None  # its rule needs no row of its own
    owner_details: tuple[str, ...] = ()
    allows_overbooking: bool = False
    checkin_time_path: str | None = None
    class_codes: tuple[str, ...] | None = None
    default_class: str | None = None
    search_fields: tuple[str, ...] = ()
    seat_no_pattern: re.Pattern[str] = re.compile(r"[A-Z]-[0-9]{1,2}-[0-9]{1,2}")
    closed: set[int] = field(default_factory=set)
    texts: SaleTexts = field(default_factory=lambda: CONCERT_TEXTS)
    not_found_error: type = InvalidRequest

    def is_open(self, sale: Sale, *, now: datetime) -> bool:
        return sale.pk not in self.closed

    def open_q(self, *, now: datetime, prefix: str = "") -> Q:
        return ~Q(**{f"{prefix}pk__in": sorted(self.closed)})

    def closed_detail(self, sale: Sale) -> str:
        return f"Concert {sale.pk} is over."

    def describe(self, sale: Sale) -> SaleSummary:
        return SaleSummary(
            title=f"concert {sale.pk}", starts_at=timezone.now(), time_zone="UTC", place="Hall"
        )

    def class_label(self, code: str) -> str | None:
        return f"Category {code}"

    def sells_seatless(self, sale: Sale, code: str) -> bool:
        return code == "GA"

    def is_called_off(self, sale: Sale) -> bool:
        return False

    def has_begun(self, sale: Sale, *, now: datetime) -> bool:
        return sale.pk in self.closed


@pytest.fixture
def hall(monkeypatch):
    hall = ConcertHall()
    monkeypatch.setitem(catalogue._registry, str(SaleKind.EVENT), hall)
    return hall


@pytest.fixture
def concert(hall) -> Sale:
    """Section B, row 12, seats 1-4 in category A; a standing area of 3 places (GA)."""
    return open_sale(
        kind=SaleKind.EVENT,
        classes=[
            ClassSpec(code="A", capacity=4, price=Decimal("50.00")),
            ClassSpec(code="GA", capacity=3, price=Decimal("20.00")),
        ],
        seats=[
            SeatSpec(
                seat_no=f"B-12-{n}",
                row=12,
                letter=chr(ord("0") + n),
                fare_class="A",
                section="B",
                accessible=n == 1,
            )
            for n in range(1, 5)
        ],
    )


def test_open_sale_creates_classes_and_seats_without_any_catalogue_row(concert):
    assert Sale.objects.filter(pk=concert.pk, flight__isnull=True).exists()
    assert {i.fare_class: i.capacity for i in Inventory.objects.filter(sale=concert)} == {
        "A": 4,
        "GA": 3,
    }
    seats = Seat.objects.filter(sale=concert).order_by("seat_no")
    assert [s.seat_no for s in seats] == ["B-12-1", "B-12-2", "B-12-3", "B-12-4"]
    assert seats[0].accessible and seats[0].section == "B"


def test_a_catalogue_without_overbooking_cannot_open_an_overbooked_sale(hall):
    with pytest.raises(InvalidRequest):
        open_sale(
            kind=SaleKind.EVENT,
            classes=[ClassSpec(code="GA", capacity=3, price=Decimal("1"), overbook_limit=1)],
        )


def test_hold_expire_and_takeover_on_a_bare_sale(concert, customer, other_customer):
    stale = hold_seats(
        customer=other_customer, sale_id=concert.pk, fare_class="A", seat_numbers=["b-12-2"]
    )
    assert stale.amount == Decimal("50.00") and stale.sale_id == concert.pk
    with pytest.raises(SeatUnavailable):
        hold_seats(customer=customer, sale_id=concert.pk, fare_class="A", seat_numbers=["B-12-2"])

    # The hold lapses: the next customer takes the seat over in the same transaction.
    Booking.objects.filter(pk=stale.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    Seat.objects.filter(booking=stale).update(held_until=timezone.now() - timedelta(seconds=1))
    taken = hold_seats(
        customer=customer, sale_id=concert.pk, fare_class="A", seat_numbers=["B-12-2", "B-12-3"]
    )
    assert Booking.objects.get(pk=stale.pk).status == BookingStatus.EXPIRED
    assert set(Seat.objects.filter(booking=taken).values_list("seat_no", flat=True)) == {
        "B-12-2",
        "B-12-3",
    }
    assert Inventory.objects.get(sale=concert, fare_class="A").held == 2
    assert check_inventory(sale_id=concert.pk) == []

    # The sweep expires what is left and gives the units back.
    Booking.objects.filter(pk=taken.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    Seat.objects.filter(booking=taken).update(held_until=timezone.now() - timedelta(seconds=1))
    assert expire_holds() == 1
    assert Seat.objects.filter(sale=concert, status=SeatStatus.AVAILABLE).count() == 4
    assert Inventory.objects.get(sale=concert, fare_class="A").held == 0
    assert check_inventory(sale_id=concert.pk) == []


def test_a_standing_area_is_sold_by_count_and_never_beyond_capacity(concert, customer):
    hold_seatless(customer=customer, sale_id=concert.pk, fare_class="GA", passengers=3)
    with pytest.raises(SoldOut):
        hold_seatless(customer=customer, sale_id=concert.pk, fare_class="GA", passengers=1)
    assert Inventory.objects.get(sale=concert, fare_class="GA").held == 3
    assert check_inventory(sale_id=concert.pk) == []


def test_the_catalogues_rule_closes_the_sale(concert, hall, customer):
    hall.closed.add(concert.pk)
    with pytest.raises(SaleClosed, match=r"Concert \d+ is over"):
        hold_seats(customer=customer, sale_id=concert.pk, fare_class="A", seat_numbers=["B-12-1"])
    with pytest.raises(SaleClosed):
        hold_seatless(customer=customer, sale_id=concert.pk, fare_class="GA", passengers=1)
    assert not Booking.objects.filter(sale=concert).exists()
