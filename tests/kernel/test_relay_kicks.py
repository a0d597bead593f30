"""kernel.kicks through the real Redis broker, with no worker: one relay kick pending at a
time, and no committed event left behind by a kick that was not sent."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
import redis
from django.conf import settings as django_settings

from config.celery import app
from kernel import kicks, outbox
from kernel.models import OutboxEvent
from kernel.tasks import relay_outbox
from tests.bookings.confirming import hold_and_confirm
from tests.celery_queue import purge_queue

pytestmark = pytest.mark.django_db(transaction=True)
FLAG = kicks.pending_key(outbox.OUTBOX_RELAY)


@pytest.fixture
def broker():
    assert app.conf.broker_url.startswith("redis://"), "these tests need the Redis broker"
    assert not app.conf.task_always_eager
    purge_queue()
    client = redis.Redis.from_url(app.conf.broker_url)
    yield client
    purge_queue()


def queued_kicks(client) -> int:
    """Relay kicks waiting in the queue (other messages, if any, are not counted)."""
    messages = client.lrange(app.conf.task_default_queue, 0, -1)
    return sum(json.loads(m)["headers"]["task"] == "bookings.relay_outbox" for m in messages)


def unpublished() -> int:
    return OutboxEvent.objects.filter(published_at__isnull=True).count()


def test_commits_while_a_kick_is_pending_send_none_and_its_relay_relays_them_all(
    broker, customer, flight
):
    for seats in (("12A", "12B"), ("13A", "13B"), ("14A", "14B")):
        hold_and_confirm(customer, flight, seats=seats)
    assert queued_kicks(broker) == 1  # the first commit's; the two others found it pending
    assert unpublished() == 3

    relay_outbox()  # the queued kick runs (beat's tick is the same task)

    assert unpublished() == 0, "the one kick relayed every commit it stood for"
    assert not broker.exists(FLAG)
    # Taken: the next commit needs a kick of its own, and sends it.
    hold_and_confirm(customer, flight, seats=("15A", "15B"))
    assert queued_kicks(broker) == 2


def test_control_a_relay_that_did_not_take_the_flag_leaves_the_next_commit_unkicked(
    broker, customer, flight, monkeypatch
):
    # Why the relay takes the flag first: without it, a commit after the relay ran finds
    # the old flag, sends nothing, and its event waits for beat (or for the flag's TTL).
    monkeypatch.setattr(kicks, "taken", lambda task, name: None)
    hold_and_confirm(customer, flight)
    relay_outbox()
    hold_and_confirm(customer, flight, seats=("13A", "13B"))
    assert queued_kicks(broker) == 1
    assert unpublished() == 1


def test_a_flag_outliving_its_ttl_lets_the_next_commit_kick(broker, customer, flight, settings):
    settings.OUTBOX = {**django_settings.OUTBOX, "KICK_PENDING_SECONDS": 0.05}
    hold_and_confirm(customer, flight)
    time.sleep(0.1)  # the kick was lost, say: its flag does not stand for ever
    hold_and_confirm(customer, flight, seats=("13A", "13B"))
    assert queued_kicks(broker) == 2


def test_with_redis_refusing_the_flag_every_commit_kicks(broker, customer, flight, monkeypatch):
    # Refused where every command is written, whichever connection the SET goes on (the
    # thread's own, kernel.redis_own_connection, or redis-py's pool); the publish still works.
    real_send = redis.connection.AbstractConnection.send_packed_command

    def refuse_set(connection, command, *args, **kwargs):
        if b"".join(command).split(b"\r\n", 3)[2].upper() == b"SET":
            raise redis.ConnectionError("flag store down")
        return real_send(connection, command, *args, **kwargs)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", refuse_set)
    hold_and_confirm(customer, flight)
    hold_and_confirm(customer, flight, seats=("13A", "13B"))
    assert queued_kicks(broker) == 2


def test_a_publish_that_failed_leaves_no_flag_behind(broker):
    def fail(**options):
        raise ConnectionError("broker hiccup")

    task = SimpleNamespace(app=relay_outbox.app, apply_async=fail)
    with pytest.raises(ConnectionError):
        kicks.kick(task, outbox.OUTBOX_RELAY)
    assert not broker.exists(FLAG), "nothing is queued, so the next commit must kick"

    sent = []
    task = SimpleNamespace(app=relay_outbox.app, apply_async=lambda **options: sent.append(1))
    assert kicks.kick(task, outbox.OUTBOX_RELAY) is True
    assert kicks.kick(task, outbox.OUTBOX_RELAY) is False
    assert sent == [1]


def test_eager_celery_keeps_no_flag(broker, customer, flight):
    # No queue, no pending kick: each commit runs the relay in place, as before.
    app.conf.task_always_eager = True
    try:
        hold_and_confirm(customer, flight)
        hold_and_confirm(customer, flight, seats=("13A", "13B"))
    finally:
        app.conf.task_always_eager = False
    assert unpublished() == 0
    assert not broker.exists(FLAG)
