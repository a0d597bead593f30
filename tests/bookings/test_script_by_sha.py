"""The hold filters' scripts go to Redis by their SHA1 (EVALSHA), the script's text only
when Redis answers NOSCRIPT (restarted, SCRIPT FLUSH, a cluster node new to the slot): a
hold's settle and a gate's release carry 40 bytes, not the script (issue 26).  The answers
are the same either way."""

from __future__ import annotations

import pytest

from bookings import availability
from bookings import availability_scripts as scripts
from tests.redis_wire import record_sent_commands

pytestmark = pytest.mark.django_db

SALE = 78


@pytest.fixture
def redis_client(settings):
    from tests import cluster_run

    settings.HOLD_FILTERS = {
        **settings.HOLD_FILTERS,
        "REDIS_URL": settings.REDIS_URL,
        "REDIS_CLUSTER": cluster_run.WHOLE_RUN_CLUSTER is not None,
        "SEAT_GATE": True,
        "AVAILABILITY_COUNTER": True,
    }
    if cluster_run.WHOLE_RUN_CLUSTER is not None:
        settings.HOLD_FILTERS["REDIS_URL"] = settings.REDIS_CLUSTER_URL
    availability._down_until = 0.0
    client = availability._client()
    client.delete(*[availability.gate_key(SALE, s) for s in ("1A", "1B")])
    yield client
    availability._down_until = 0.0


@pytest.fixture
def sent(redis_client, monkeypatch):
    """The script commands the filters send, by name, in order, whichever way they go
    (redis-py's, or the thread's own connection: kernel.redis_own_connection)."""
    return record_sent_commands(monkeypatch)


def gate(redis_client, token: str) -> list:
    keys = [availability.gate_key(SALE, s) for s in ("1A", "1B")]
    return availability._run(scripts.GATE, keys, [token, 60_000])


def test_a_script_goes_by_its_sha_and_answers_as_the_text_does(redis_client, sent):
    gate(redis_client, "mine")  # Redis now knows GATE, whatever it knew before
    sent.clear()
    assert gate(redis_client, "theirs") == [1, 2]  # both seats taken by "mine"
    assert sent == ["EVALSHA"]
    assert redis_client.eval(
        scripts.GATE, 2, *[availability.gate_key(SALE, s) for s in ("1A", "1B")], "x", 1
    ) == [1, 2]


def test_a_redis_without_the_script_gets_its_text_once(redis_client, sent, monkeypatch):
    """The control of the fallback: a SHA Redis does not know (as after a restart) is
    answered NOSCRIPT, and the text runs instead, with the same answer."""
    monkeypatch.setattr(scripts, "sha", lambda script: "0" * 40)
    assert gate(redis_client, "mine") == []  # both seats free: taken now
    assert sent == ["EVALSHA", "EVAL"]
    assert redis_client.get(availability.gate_key(SALE, "1A")) == b"mine"
