"""Who hears about whose bookings: a dedicated permission, not is_staff (issue 24, item 7)."""

import pytest
from django.contrib.auth.models import Permission

from bookings.customer_holds import hold_seats
from kernel.outbox import relay_outbox
from partners.models import WebhookDelivery
from partners.services import create_endpoint
from tests.bookings.confirming import confirm
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _staff_with(*codenames):
    user = UserFactory(is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


def _confirmed(customer, flight, seat):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=[seat]
    )
    confirm(booking)
    return booking


def test_a_gate_scanner_with_manage_own_webhooks_hears_only_its_own_bookings(flight, receiver):
    scanner = _staff_with("manage_own_webhooks")
    endpoint = create_endpoint(owner=scanner, url=receiver.url, event_types=["booking.confirmed"])
    theirs = _confirmed(UserFactory(), flight, "14A")
    mine = _confirmed(scanner, flight, "14B")
    relay_outbox()
    heard = set(
        WebhookDelivery.objects.filter(endpoint=endpoint).values_list("data__bookingId", flat=True)
    )
    assert heard == {mine.pk}
    assert theirs.pk not in heard


def test_control_the_receive_all_bookings_permission_hears_every_booking(flight, receiver):
    crm = _staff_with("manage_own_webhooks", "receive_all_bookings")
    endpoint = create_endpoint(owner=crm, url=receiver.url, event_types=["booking.confirmed"])
    first = _confirmed(UserFactory(), flight, "14A")
    second = _confirmed(UserFactory(), flight, "14B")
    relay_outbox()
    heard = set(
        WebhookDelivery.objects.filter(endpoint=endpoint).values_list("data__bookingId", flat=True)
    )
    assert heard == {first.pk, second.pk}


def test_a_deactivated_account_keeps_no_platform_wide_feed(flight, receiver):
    crm = _staff_with("manage_own_webhooks", "receive_all_bookings")
    endpoint = create_endpoint(owner=crm, url=receiver.url, event_types=["booking.confirmed"])
    crm.is_active = False
    crm.save(update_fields=["is_active"])
    _confirmed(UserFactory(), flight, "14A")
    relay_outbox()
    assert not WebhookDelivery.objects.filter(endpoint=endpoint).exists()
