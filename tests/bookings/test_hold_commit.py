"""A customer's hold commits without waiting for the WAL flush, and only the hold: the setting
is local to the hold's transaction, so the next transaction on the same (persistent)
connection, a payment or a sale, waits for the flush again."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from bookings.customer_holds import hold_seatless, hold_seats


@pytest.fixture(autouse=True)
def durable_by_default(db):
    """The test cluster runs with synchronous_commit off for speed; production's is on."""
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO on")
    yield
    with connection.cursor() as cursor:
        cursor.execute("RESET synchronous_commit")


def commit_mode() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('synchronous_commit')")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["seats", "seatless"])
def test_a_hold_commits_asynchronously_and_the_next_transaction_does_not(customer, flight, kind):
    assert commit_mode() == "on"
    with transaction.atomic():
        if kind == "seats":
            hold_seats(
                customer=customer,
                sale_id=flight.sale_id,
                fare_class="ECONOMY",
                seat_numbers=["12A"],
            )
        else:
            hold_seatless(
                customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
            )
        assert commit_mode() == "off"  # what this transaction's COMMIT will use
    assert commit_mode() == "on"
    with transaction.atomic():
        assert commit_mode() == "on"


@pytest.mark.django_db(transaction=True)
def test_operators_can_make_holds_wait_for_the_flush(customer, flight, settings):
    settings.SEATKEEPER = {**settings.SEATKEEPER, "HOLD_SYNCHRONOUS_COMMIT": True}
    with transaction.atomic():
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
        assert commit_mode() == "on"
