"""Issue 11, item 2: staff who may only *view* cannot change anything through the admin.

The test enumerates every action of every ModelAdmin in `admin.site._registry` (so a new
action is covered the day it is added) and every add/change/delete URL, runs each as a
view-only staff user, and compares a snapshot of every table before and after.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import Group, Permission
from django.contrib.sessions.models import Session
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import (
    ClockedSchedule,
    CrontabSchedule,
    IntervalSchedule,
    PeriodicTask,
    SolarSchedule,
)
from rest_framework.authtoken.models import Token

from bookings.customer_holds import hold_seats
from bookings.models import WaitlistEntry, WaitlistStatus
from flights.models import Flight, FlightStatus
from partners.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from payments.models import (
    Payment,
    Refund,
    RefundPolicy,
    RefundReason,
    RefundStatus,
    WebhookEvent,
)
from tests.factories import UserFactory
from tests.pages.test_staff_admin import confirmed

pytestmark = pytest.mark.django_db(transaction=True)

# Rows that a request may legitimately write without changing anything staff care about.
NOT_SNAPSHOTTED = {Session}


def snapshot() -> dict[str, list[dict]]:
    return {
        model._meta.label: sorted(model._base_manager.values(), key=lambda row: str(row["id"]))
        if "id" in {f.attname for f in model._meta.concrete_fields}
        else sorted(map(str, model._base_manager.values()))
        for model in apps.get_models()
        if model not in NOT_SNAPSHOTTED
    }


@pytest.fixture
def every_kind_of_row(customer, other_customer, flight, settings):
    """At least one row for every registered model, in states every action would act on."""
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}
    booking = confirmed(customer, flight)
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20A"]
    )
    now = timezone.now()
    Refund.objects.create(
        payment=Payment.objects.get(booking=booking),
        sale_id=booking.sale_id,
        amount=Decimal("1.00"),
        currency="EUR",
        status=RefundStatus.FAILED,
        reason=RefundReason.CANCELLATION,
        created_at=now,
    )
    WaitlistEntry.objects.create(
        sale=flight.sale,
        fare_class="BUSINESS",
        customer=other_customer,
        party_size=1,
        status=WaitlistStatus.WAITING,
        joined_at=now,
    )
    WebhookEvent.objects.create(
        gateway="sandbox", event_id="evt_1", event_type="payment.succeeded", received_at=now
    )
    PeriodicTask.objects.create(
        name="a beat job",
        task="bookings.tasks.expire_holds",
        interval=IntervalSchedule.objects.create(every=30, period=IntervalSchedule.SECONDS),
    )
    RefundPolicy.objects.get_or_create(
        kind="FLIGHT", sale=None, fare_class="ECONOMY", defaults={"updated_at": now}
    )
    ClockedSchedule.objects.create(clocked_time=now)
    CrontabSchedule.objects.create(minute="5")
    SolarSchedule.objects.create(event="sunrise", latitude="10.8", longitude="106.6")
    Group.objects.create(name="agents")
    Token.objects.create(user=other_customer)
    attempt = {"user_agent": "x", "ip_address": "192.0.2.1", "username": "x", "http_accept": "*"}
    AccessAttempt.objects.create(
        **attempt, path_info="/", get_data="", post_data="", failures_since_start=1
    )
    AccessLog.objects.create(**attempt, path_info="/")
    AccessFailureLog.objects.create(**attempt, path_info="/", locked_out=False)
    endpoint = WebhookEndpoint.objects.create(
        owner=other_customer,
        url="https://partner.example/hook",
        secret="s" * 40,
        event_types=["booking.confirmed"],
        created_at=now,
        updated_at=now,
    )
    WebhookDelivery.objects.create(
        endpoint=endpoint,
        event_id=uuid.uuid4(),
        outbox_event_id=1,
        event_type="booking.confirmed",
        occurred_at=now,
        status=DeliveryStatus.FAILED,
        attempts=12,
        created_at=now,
        updated_at=now,
    )
    return booking


@pytest.fixture
def view_only_staff(db):
    user = UserFactory(username="viewer", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    return user


def changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def every_action() -> list[tuple[type, str]]:
    return [
        (model, name)
        for model, model_admin in admin.site._registry.items()
        for _, name, _ in model_admin._get_base_actions()
    ]


def test_every_admin_action_declares_a_permission():
    undeclared = [
        f"{model._meta.label}.{name}"
        for model, model_admin in admin.site._registry.items()
        for func, name, _ in model_admin._get_base_actions()
        if not getattr(func, "allowed_permissions", None)
    ]
    assert undeclared == []


def test_view_only_staff_cannot_run_any_admin_action(client, every_kind_of_row, view_only_staff):
    client.force_login(view_only_staff)
    before = snapshot()
    tried = []
    for model, action in every_action():
        # A model the fixture has no row for is still tried (on an id that does not exist);
        # the actions listed at the end run on real rows.
        ids = [str(pk) for pk in model._default_manager.values_list("pk", flat=True)[:5]]
        ids = ids or ["999999"]
        response = client.post(
            changelist(model),
            # "post": "yes" is the confirmation step of delete_selected: skip straight to it.
            {"action": action, "_selected_action": ids, "post": "yes"},
            follow=True,
        )
        # Not offered to this user: the admin ignores it ("No action selected." or a plain
        # changelist when no action at all is offered), or refuses with 403.  An action that
        # ran would leave its own message ("... marked departed.") and change the snapshot.
        assert response.status_code in (200, 403), (model, action, response.status_code)
        shown = {str(m) for m in response.context["messages"]} if response.context else set()
        assert shown <= {"No action selected."}, (model._meta.label, action, shown)
        assert snapshot() == before, f"{model._meta.label}.{action} changed the database"
        tried.append(f"{model._meta.label}.{action}")
    # The actions that broke production in the review are among those tried.
    for expected in (
        "bookings.Booking.cancel_with_refund",
        "flights.Seat.block",
        "flights.Seat.unblock",
        "flights.Flight.mark_departed",
        "payments.Refund.retry_refund",
        "bookings.WaitlistEntry.remove_entries",
    ):
        assert expected in tried


def test_view_only_staff_cannot_add_change_or_delete_through_admin_forms(
    client, every_kind_of_row, view_only_staff, flight
):
    client.force_login(view_only_staff)
    before = snapshot()
    inventory = flight.sale.inventories.get(fare_class="ECONOMY")
    # The inventory edit staff use on a sale day, with a real form body.
    response = client.post(
        reverse("admin:flights_fareinventory_change", args=[inventory.pk]),
        {"capacity": 1, "overbook_limit": 0, "price": "1.00", "currency": "EUR"},
    )
    assert response.status_code == 403
    for model, model_admin in admin.site._registry.items():
        info = (model._meta.app_label, model._meta.model_name)
        pk = model._default_manager.values_list("pk", flat=True).first() or 999999
        urls = [reverse("admin:{}_{}_add".format(*info))]
        urls += [reverse("admin:{}_{}_change".format(*info), args=[pk])]
        urls += [reverse("admin:{}_{}_delete".format(*info), args=[pk])]
        for url in urls:
            response = client.post(url, {"post": "yes"})
            assert response.status_code == 403, (url, response.status_code)
        for path in model_admin.get_urls():
            assert path.name is None or path.name.startswith(f"{info[0]}_{info[1]}_"), (
                f"custom admin URL {path.name} needs its own permission test"
            )
    assert snapshot() == before


def test_control_staff_with_change_permission_does_run_the_action(
    client, every_kind_of_row, flight
):
    """The same request with the change permission really departs the flight, so the test above
    would see an action that slipped through."""
    editor = UserFactory(username="editor", is_staff=True)
    editor.user_permissions.set(
        Permission.objects.filter(codename__in=["view_flight", "change_flight"])
    )
    client.force_login(editor)
    client.post(
        changelist(Flight),
        {"action": "mark_departed", "_selected_action": [str(flight.pk)]},
    )
    assert Flight.objects.get(pk=flight.pk).status == FlightStatus.DEPARTED
