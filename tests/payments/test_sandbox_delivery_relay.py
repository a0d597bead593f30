"""The sandbox's events are their own delivery queue (payments.gateways.sandbox_delivery): a
pay request kicks the relay instead of publishing the delivery task itself, the relay (or
beat's tick, when a kick is lost) publishes each owed event once, and an event written with
delivery off is never owed."""

import pytest

from payments.gateways import sandbox_delivery
from payments.models import SandboxEvent
from payments.tasks import deliver_sandbox_event, queue_sandbox_deliveries
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def published(monkeypatch):
    """The delivery tasks published, as (event id, countdown); none is run."""
    calls = []
    monkeypatch.setattr(
        deliver_sandbox_event,
        "apply_async",
        lambda args, countdown=None: calls.append((args[0], countdown)),
    )
    return calls


@pytest.fixture
def kicks(monkeypatch):
    """The relay's kicks, counted; the relay itself is not run (a kick lost, say)."""
    calls = []
    monkeypatch.setattr(sandbox_delivery, "kick_relay", lambda: calls.append(1))
    return calls


@pytest.fixture
def delivering(settings):
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": True}


def _paid(customer, flight):
    response = pay(api_client(customer), hold(customer, flight), paymentMethod=GOOD_CARD)
    assert response.status_code == 201, response.content
    return SandboxEvent.objects.get()


def test_a_pay_kicks_the_relay_and_publishes_no_delivery_itself(
    customer, flight, delivering, published, kicks
):
    event = _paid(customer, flight)
    assert published == [] and kicks == [1]
    assert event.queued_at is None  # owed


def test_the_relay_publishes_each_owed_event_once(customer, flight, delivering, published, kicks):
    event = _paid(customer, flight)
    assert queue_sandbox_deliveries() == 1  # beat's tick, the kick being lost
    assert published == [(event.pk, None)]
    assert SandboxEvent.objects.get().queued_at is not None
    assert queue_sandbox_deliveries() == 0 and published == [(event.pk, None)]


def test_the_relay_keeps_the_duplicates_and_the_delay(
    customer, flight, delivering, published, kicks, settings
):
    settings.PAYMENTS_SANDBOX = {
        **settings.PAYMENTS_SANDBOX,
        "DUPLICATE_DELIVERIES": 2,
        "DELAY_SECONDS": 3,
    }
    event = _paid(customer, flight)
    assert sandbox_delivery.queue_deliveries() == 1
    assert published == [(event.pk, 3)] * 3


def test_an_event_written_with_delivery_off_is_never_owed(customer, flight, published, kicks):
    event = _paid(customer, flight)  # the payments tests' default: delivery off
    assert kicks == [] and event.queued_at == event.created_at
    assert sandbox_delivery.queue_deliveries() == 0 and published == []
