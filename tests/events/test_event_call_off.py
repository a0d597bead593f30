"""Calling an event off from the admin (issue 24, item 3): it cancels and refunds bookings, so
it needs the Booking admin's permission and a confirmation page with the refunds; once the
event has begun only staff who may grant goodwill refunds can do it, and an event that has
ended (FINISHED by its beat task) cannot be called off at all."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.models import Booking, BookingStatus
from events.models import Event, EventStatus
from events.services import cancel_event
from events.tasks import finish_events
from kernel.errors import DomainError
from payments.models import Refund
from tests.api.conftest import GOOD_CARD, client_for, pay, sandbox_payments  # noqa: F401
from tests.events.factories import EventFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

CHANGELIST = "/admin/events/event/"


def staff_with(*codenames: str):
    user = UserFactory(is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


def paid_event(customer) -> tuple[Event, Booking]:
    event = EventFactory()
    booking = hold_seats(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=["1-1-1"],
        passenger_names=["Ada Lovelace"],
    )
    response = pay(
        client_for(customer), booking.pk, amount="80.00", currency="EUR", paymentMethod=GOOD_CARD
    )
    assert response.status_code == 201, response.content
    return event, booking


def begin(event: Event, *, ago: timedelta) -> None:
    Event.objects.filter(pk=event.pk).update(starts_at=timezone.now() - ago)


def call_off(client, event: Event, **extra):
    return client.post(CHANGELIST, {"action": "cancel", "_selected_action": [event.pk], **extra})


def test_an_event_editor_without_the_booking_permission_cannot_call_it_off(
    sandbox_payments,  # noqa: F811
    client,
    customer,
):
    event, booking = paid_event(customer)
    client.force_login(staff_with("change_event", "view_event"))

    call_off(client, event)
    call_off(client, event, confirm="yes")

    assert Event.objects.get(pk=event.pk).status == EventStatus.ON_SALE
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert not Refund.objects.exists()


def test_with_the_booking_permission_the_refunds_are_shown_first_and_paid_on_confirming(
    sandbox_payments,  # noqa: F811
    client,
    customer,
):
    event, booking = paid_event(customer)
    staff = staff_with("change_event", "view_event", "change_booking")
    client.force_login(staff)

    page = call_off(client, event)

    assert page.status_code == 200
    assert page.templates[0].name == "admin/events/event/cancel_confirm.html"
    preview = page.context["previews"][0]
    assert [(row.booking.pk, row.refund) for row in preview.bookings] == [
        (booking.pk, Decimal("80.00"))
    ]
    assert not preview.refused and not preview.goodwill
    assert f'data-booking="{booking.pk}"' in page.content.decode()
    assert Event.objects.get(pk=event.pk).status == EventStatus.ON_SALE  # nothing yet
    assert not Refund.objects.exists()

    call_off(client, event, confirm="yes")

    assert Event.objects.get(pk=event.pk).status == EventStatus.CANCELLED
    refund = Refund.objects.get(payment__booking=booking)
    assert refund.amount == Decimal("80.00") and refund.approved_by == staff
    assert not refund.goodwill


def test_after_the_start_only_staff_who_may_grant_goodwill_can_call_it_off(
    sandbox_payments,  # noqa: F811
    client,
    customer,
):
    event, booking = paid_event(customer)
    begin(event, ago=timedelta(minutes=30))
    client.force_login(staff_with("change_event", "view_event", "change_booking"))

    page = call_off(client, event)
    assert "only staff who may grant goodwill refunds" in page.context["previews"][0].refused
    call_off(client, event, confirm="yes")

    assert Event.objects.get(pk=event.pk).status == EventStatus.ON_SALE
    assert not Refund.objects.exists()

    # The control: with the goodwill permission it is called off, as goodwill refunds.
    boss = staff_with("change_event", "view_event", "change_booking", "refund_goodwill")
    client.force_login(boss)
    assert call_off(client, event).context["previews"][0].goodwill
    call_off(client, event, confirm="yes")

    assert Event.objects.get(pk=event.pk).status == EventStatus.CANCELLED
    refund = Refund.objects.get(payment__booking=booking)
    assert refund.amount == Decimal("80.00") and refund.approved_by == boss and refund.goodwill


def test_the_beat_task_finishes_ended_events_and_a_finished_event_cannot_be_called_off(
    sandbox_payments,  # noqa: F811
    customer,
):
    event, booking = paid_event(customer)
    running = EventFactory()
    later = EventFactory()
    begin(event, ago=timedelta(hours=3, minutes=1))  # the default duration is three hours
    begin(running, ago=timedelta(hours=2, minutes=59))

    assert finish_events.apply().get() == 1

    statuses = dict(Event.objects.values_list("pk", "status"))
    assert statuses == {
        event.pk: EventStatus.FINISHED,
        running.pk: EventStatus.ON_SALE,
        later.pk: EventStatus.ON_SALE,
    }
    assert finish_events.apply().get() == 0  # safe to run twice

    boss = staff_with("change_event", "view_event", "change_booking", "refund_goodwill")
    with pytest.raises(DomainError, match="already taken place"):
        cancel_event(event_id=event.pk, cancelled_by=boss)
    assert Event.objects.get(pk=event.pk).status == EventStatus.FINISHED
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert not Refund.objects.exists()


def test_an_event_past_its_end_is_refused_before_the_task_has_run(
    sandbox_payments,  # noqa: F811
    customer,
):
    event, booking = paid_event(customer)
    begin(event, ago=timedelta(hours=4))
    assert Event.objects.get(pk=event.pk).status == EventStatus.ON_SALE
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED

    boss = staff_with("change_event", "view_event", "change_booking", "refund_goodwill")
    with pytest.raises(DomainError, match="already taken place"):
        cancel_event(event_id=event.pk, cancelled_by=boss)
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert not Refund.objects.exists()
