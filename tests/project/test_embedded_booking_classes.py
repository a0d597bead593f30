"""Nested booking classes in the embedded mode (SQLite, docs/fare-classes.md): the engine's
own hold path, through `manage.py shell` on a fresh SQLite database, keeps every nested
limit, moves the counters through a sale and a cancel, and leaves `check_inventory` clean."""

from __future__ import annotations

import json

from tests.project.test_embedded_run import embedded_env, manage

NESTED_ON_SQLITE = """
import json
from decimal import Decimal
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from bookings.audit import check_inventory
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import BookingClassSoldOut
from bookings.inventory import set_booking_class
from bookings.lifecycle import cancel_hold, sell_held_booking
from bookings.models import Booking, BookingClass
from django.utils import timezone
from flights.models import Flight
flight = Flight.objects.filter(status="SCHEDULED").order_by("departure_at").first()
for code, rank, limit, price in (("LAUNCH", 1, 2, "19.00"), ("SAVER", 2, 3, "39.00")):
    set_booking_class(sale_id=flight.sale_id, fare_class="ECONOMY", code=code, name=code,
                      rank=rank, auth_limit=limit, price=Decimal(price))
users = [get_user_model().objects.create_user(f"nested{i}", password="x") for i in range(5)]
won = hold_seats(customer=users[0], sale_id=flight.sale_id, fare_class="ECONOMY",
                 seat_numbers=["20A"], booking_class="LAUNCH")
with transaction.atomic():
    sell_held_booking(Booking.objects.select_for_update().get(pk=won.pk), now=timezone.now())
given_up = hold_seatless(customer=users[1], sale_id=flight.sale_id, fare_class="ECONOMY",
                         passengers=1, booking_class="LAUNCH")
refusals = []
try:
    hold_seatless(customer=users[2], sale_id=flight.sale_id, fare_class="ECONOMY",
                  passengers=1, booking_class="LAUNCH")
except BookingClassSoldOut:
    refusals.append("LAUNCH")
hold_seatless(customer=users[2], sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1,
              booking_class="SAVER")
try:
    hold_seatless(customer=users[3], sale_id=flight.sale_id, fare_class="ECONOMY",
                  passengers=1, booking_class="SAVER")
except BookingClassSoldOut:
    refusals.append("SAVER")
cancel_hold(customer=users[1], booking_id=given_up.pk)
counters = {c.code: [c.held, c.sold] for c in BookingClass.objects.filter(sale_id=flight.sale_id)}
surcharge = flight.sale.seats.get(seat_no="20A").surcharge
print(json.dumps({"vendor": connection.vendor, "amount": str(won.amount - surcharge),
                  "refusals": refusals,
                  "counters": counters, "audit": check_inventory(sale_id=flight.sale_id)}))
"""


def test_nested_booking_classes_hold_their_limits_on_sqlite(tmp_path):
    env = embedded_env(tmp_path / "embedded.sqlite3")
    manage(env, "migrate", "--noinput")
    manage(env, "load_demo", "--days", "2")
    out = json.loads(manage(env, "shell", "-c", NESTED_ON_SQLITE).strip().splitlines()[-1])
    assert out["vendor"] == "sqlite"
    assert out["amount"] == "19.00"  # the launch price (the seat's surcharge on top)
    assert out["refusals"] == ["LAUNCH", "SAVER"]
    assert out["counters"] == {"LAUNCH": [0, 1], "SAVER": [1, 1]}
    assert out["audit"] == []
