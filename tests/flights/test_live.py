"""Seat changes reach the flight's seat-map group after commit, never before, with versions
that grow by one per message."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.lifecycle import cancel_hold, expire_holds
from bookings.live import current_version
from bookings.models import Booking
from flights.cabin_map import seat_map_snapshot
from flights.models import Seat
from tests.live import SeatMapListener


@pytest.fixture
def listener(flight):
    listening = SeatMapListener(flight.pk)
    yield listening
    listening.close()


@pytest.mark.django_db
def test_a_hold_is_announced_only_when_its_transaction_commits(
    customer, flight, listener, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        hold_seats(
            customer=customer,
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=["12B", "12A"],
        )
    assert listener.next(timeout=0.5) is None  # not committed yet: nothing may be sent
    before = current_version(flight.pk)
    for callback in callbacks:
        callback()
    message = listener.next()
    assert message["type"] == "seats.changed"
    assert message["seats"] == {"12A": "HELD", "12B": "HELD"}
    assert message["version"] == before + 1 == current_version(flight.pk)


def lapse(customer):
    past = timezone.now() - timedelta(seconds=1)
    ids = list(
        Booking.objects.filter(customer=customer, status="HELD").values_list("pk", flat=True)
    )
    Booking.objects.filter(pk__in=ids).update(expires_at=past)
    Seat.objects.filter(booking_id__in=ids).update(held_until=past)


class Rollback(Exception):
    pass


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_hold_announces_nothing(customer, flight, listener):
    with pytest.raises(Rollback), transaction.atomic():
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["4A"]
        )
        raise Rollback
    assert listener.next(timeout=1.0) is None
    assert Booking.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_hold_cancel_expiry_and_takeover_arrive_in_version_order(
    customer, other_customer, flight, listener
):
    start = current_version(flight.pk)
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20A", "20B"]
    )
    cancel_hold(customer=customer, booking_id=booking.pk)
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["21A"]
    )
    lapse(customer)
    # Taking over the lapsed hold releases its seat and holds it again, in one transaction.
    hold_seats(
        customer=other_customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["21A"]
    )
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["22A"]
    )
    lapse(customer)
    assert expire_holds() == 1

    messages = [listener.next() for _ in range(6)]
    assert [m["version"] for m in messages] == list(range(start + 1, start + 7))
    assert [m["seats"] for m in messages] == [
        {"20A": "HELD", "20B": "HELD"},
        {"20A": "AVAILABLE", "20B": "AVAILABLE"},  # cancelled
        {"21A": "HELD"},
        {"21A": "AVAILABLE"},  # the lapsed hold is closed...
        {"21A": "HELD"},  # ...and the seat held by the newcomer
        {"22A": "HELD"},
    ]
    expired = listener.next()
    assert expired["version"] == start + 7 and expired["seats"] == {"22A": "AVAILABLE"}
    assert listener.next(timeout=0.5) is None
    # The snapshot carries the version of the last change it contains.
    snapshot = seat_map_snapshot(flight_id=flight.pk)
    assert snapshot["version"] == start + 7
    assert snapshot["seats"]["21A"] == "HELD" and snapshot["seats"]["22A"] == "AVAILABLE"


@pytest.mark.django_db
def test_version_counter_survives_a_lost_key(flight):
    from django.core.cache import cache

    from bookings.live import _version_key, publish_seat_changes

    first = publish_seat_changes(sale_id=flight.sale_id, changes={"9A": "HELD"})
    assert publish_seat_changes(sale_id=flight.sale_id, changes={"9A": "AVAILABLE"}) == first + 1
    cache.delete(_version_key(flight.pk))
    # Reborn at a time epoch: never back to 1, never at or below a version already sent.
    assert publish_seat_changes(sale_id=flight.sale_id, changes={"9A": "HELD"}) > first + 1


# --- sold, blocked, unblocked, and seats handed to a waitlist offer --------------------------


@pytest.mark.django_db(transaction=True)
def test_a_paid_hold_is_announced_sold(customer, flight, listener):
    from payments.outcomes import confirm_payment
    from tests.payments.helpers import hold

    booking = hold(customer, flight, seats=("14A", "14B"))
    assert listener.next()["seats"] == {"14A": "HELD", "14B": "HELD"}
    payment = _payment_for(booking)

    confirm_payment(payment_id=payment.pk, reference="ch_live")

    assert listener.next()["seats"] == {"14A": "SOLD", "14B": "SOLD"}
    assert seat_map_snapshot(flight_id=flight.pk)["seats"]["14A"] == "SOLD"


def _payment_for(booking):
    from payments.models import Payment

    return Payment.objects.create(
        booking=booking,
        sale_id=booking.sale_id,
        customer=booking.customer,
        idempotency_key=f"live-{booking.pk}",
        request_fingerprint="x",
        amount=booking.amount,
        currency=booking.currency,
        gateway="sandbox",
        status="PENDING",
        created_at=timezone.now(),
        updated_at=timezone.now(),
    )


@pytest.mark.django_db(transaction=True)
def test_staff_block_and_unblock_are_announced(flight, listener):
    from flights.services import block_seat, unblock_seat

    assert block_seat(sale_id=flight.sale_id, seat_no="30F")
    assert listener.next()["seats"] == {"30F": "BLOCKED"}
    assert unblock_seat(sale_id=flight.sale_id, seat_no="30F")
    assert listener.next()["seats"] == {"30F": "AVAILABLE"}
    assert not block_seat(sale_id=flight.sale_id, seat_no="NOPE")
    assert listener.next(timeout=0.5) is None


@pytest.mark.django_db(transaction=True)
def test_seats_freed_into_a_waitlist_offer_end_up_held_on_the_map(listener):
    from bookings.models import WaitlistEntry
    from bookings.waitlist import join_waitlist
    from tests.factories import FlightFactory, UserFactory, economy_only_layout

    small = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    own = SeatMapListener(small.pk)
    try:
        holders = [UserFactory() for _ in range(6)]
        bookings = [
            hold_seats(customer=h, sale_id=small.sale_id, fare_class="ECONOMY", seat_numbers=[s])
            for h, s in zip(holders, ["1A", "1B", "1C", "1D", "1E", "1F"], strict=True)
        ]
        for _ in bookings:
            own.next()
        waiter = UserFactory()
        join_waitlist(customer=waiter, sale_id=small.sale_id, fare_class="ECONOMY", party_size=1)

        cancel_hold(customer=holders[2], booking_id=bookings[2].pk)

        released, offered = own.next(), own.next()
        assert released["seats"] == {"1C": "AVAILABLE"}
        assert offered["seats"] == {"1C": "HELD"} and offered["version"] == released["version"] + 1
        entry = WaitlistEntry.objects.get(customer=waiter)
        assert entry.offer.passengers.get().seat.seat_no == "1C"
        assert seat_map_snapshot(flight_id=small.pk)["seats"]["1C"] == "HELD"
    finally:
        own.close()
