"""Refund policies per catalogue, with an override per sale (issue 24, design risk 1).

Before: one policy per class code across every sale, so an event category named ECONOMY got
the airline's policy and every event's category "A" shared one."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.models import Seat
from events.services import AssignmentSpec, PriceCategorySpec
from payments.models import Payment, RefundPolicy
from payments.selectors import quote_for
from tests.bookings.confirming import confirm
from tests.events.factories import EventFactory
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db(transaction=True)
IN_FIVE_DAYS = timedelta(days=5)  # inside every policy's partial window below


def _policy(**fields):
    # Keyed like the constraints: the data migration's seeded rows may be there.
    key = {name: fields.pop(name, None) for name in ("kind", "sale")}
    key["fare_class"] = fields.pop("fare_class", "")
    defaults = {"full_refund_days": 14, "partial_refund_hours": 24, "updated_at": timezone.now()}
    return RefundPolicy.objects.update_or_create(**key, defaults={**defaults, **fields})[0]


def _event(code="A"):
    return EventFactory(
        starts_at=timezone.now() + IN_FIVE_DAYS,
        prices=(
            PriceCategorySpec(code=code, name="Stalls", price=Decimal("40.00")),
            PriceCategorySpec(code="Z", name="The rest", price=Decimal("20.00")),
        ),
        assignments=(
            AssignmentSpec(code, "Stalls"),
            AssignmentSpec("Z", "Balcony"),
            AssignmentSpec("Z", "Floor"),
        ),
    )


def _percent(customer, sale, fare_class):
    seat = Seat.objects.filter(sale=sale, fare_class=fare_class).order_by("seat_no").first()
    booking = confirm(
        hold_seats(
            customer=customer,
            sale_id=sale.pk,
            fare_class=fare_class,
            seat_numbers=[seat.seat_no],
            passenger_names=["Ana Lima"],
        )
    )
    booking.sale = sale
    paid = Payment(amount=booking.amount, refunded_amount=Decimal("0"), currency="EUR")
    return quote_for(booking=booking, payment=paid, now=timezone.now()).percent


def test_an_event_category_named_economy_does_not_get_the_airlines_policy(customer):
    _policy(kind="FLIGHT", fare_class="ECONOMY", partial_refund_percent=33)
    _policy(kind="EVENT", fare_class="", partial_refund_percent=80)
    event = _event(code="ECONOMY")
    assert _percent(customer, event.sale, "ECONOMY") == 80  # today: 33, the airline's
    # Control: the flight still gets its own.
    flight = FlightFactory(departure_at=timezone.now() + IN_FIVE_DAYS)
    assert _percent(customer, flight.sale, "ECONOMY") == 33


def test_an_override_for_one_event_leaves_other_events_category_a_alone(customer):
    _policy(kind="EVENT", fare_class="A", partial_refund_percent=60)
    first, second = _event(), _event()
    _policy(kind="EVENT", sale=first.sale, fare_class="A", partial_refund_percent=10)
    assert _percent(customer, first.sale, "A") == 10
    assert _percent(customer, second.sale, "A") == 60  # today: one "A" for every event


def test_staff_cannot_give_an_event_a_fare_class_policy_or_a_sale_of_another_catalogue():
    flight = FlightFactory()
    wrong_kind = RefundPolicy(kind="EVENT", sale=flight.sale, updated_at=timezone.now())
    with pytest.raises(ValidationError, match="another catalogue"):
        wrong_kind.full_clean()
    no_such_fare = RefundPolicy(kind="FLIGHT", fare_class="A", updated_at=timezone.now())
    with pytest.raises(ValidationError, match="Not a class of this catalogue"):
        no_such_fare.full_clean()
    RefundPolicy(kind="FLIGHT", fare_class="BUSINESS", updated_at=timezone.now()).full_clean()


# --- the migration, both ways, with live rows ---------------------------------------------------

BEFORE = ("payments", "0008_refund_reason_amount_mismatch")
AFTER = ("payments", "0009_refund_policies_per_catalogue")


@pytest.fixture
def back_to_latest():
    yield
    call_command("migrate", verbosity=0)


def _apps(target):
    return MigrationExecutor(connection).loader.project_state([target]).apps


def test_existing_policies_become_the_flight_catalogues_and_come_back(back_to_latest):
    call_command("migrate", *BEFORE, verbosity=0)
    old = _apps(BEFORE).get_model("payments", "RefundPolicy")
    old.objects.all().delete()
    now = timezone.now()
    old.objects.create(fare_class="ECONOMY", partial_refund_percent=33, updated_at=now)
    old.objects.create(fare_class="BUSINESS", partial_refund_percent=75, updated_at=now)

    call_command("migrate", *AFTER, verbosity=0)
    new = _apps(AFTER).get_model("payments", "RefundPolicy")
    assert set(
        new.objects.values_list("kind", "sale_id", "fare_class", "partial_refund_percent")
    ) == {
        ("FLIGHT", None, "ECONOMY", 33),
        ("FLIGHT", None, "BUSINESS", 75),
    }
    # Rows only the new shape can hold: an event catalogue's, per class code and for all.
    new.objects.create(kind="EVENT", fare_class="ECONOMY", updated_at=now)
    new.objects.create(kind="EVENT", fare_class="", updated_at=now)

    call_command("migrate", *BEFORE, verbosity=0)
    assert set(old.objects.values_list("fare_class", "partial_refund_percent")) == {
        ("ECONOMY", 33),
        ("BUSINESS", 75),
    }
