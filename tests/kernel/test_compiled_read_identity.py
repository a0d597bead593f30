"""kernel.compiled: a connection keeps each read's binding under the read itself.  Keyed by
`id()`, a read made and dropped (as tests do) left its binding to the next read CPython put
at the same address, and a JSON read came back as plain rows (CI of 8b2b13a)."""

from __future__ import annotations

import gc

import pytest
from django.contrib.auth import get_user_model

from kernel.compiled import CompiledRead
from kernel.models import OutboxEvent

pytestmark = pytest.mark.django_db

ROUNDS = 200


def _plain_read() -> CompiledRead:
    user_model = get_user_model()
    return CompiledRead(
        user_model,
        lambda pk: user_model.objects.filter(pk=pk).values_list("username"),
        pk=int,
    )


def _converted_read() -> CompiledRead:
    return CompiledRead(
        OutboxEvent,
        lambda pk: OutboxEvent.objects.filter(pk=pk).values_list("event_type", "payload"),
        pk=int,
    )


def test_reads_made_and_dropped_in_turn_each_get_their_own_binding():
    for round_ in range(ROUNDS):
        plain = round_ % 2 == 0
        read = _plain_read() if plain else _converted_read()
        assert read._compiled("default").plain_rows is plain, round_
        del read
        gc.collect()


def test_control_dropped_reads_addresses_are_reused():
    """Without a binding holding them, dropped reads' addresses come back: an id()-keyed
    binding would be found by a different read, which the test above would then catch."""
    seen: set[int] = set()
    reused = 0
    for round_ in range(ROUNDS):
        read = _plain_read() if round_ % 2 == 0 else _converted_read()
        reused += id(read) in seen
        seen.add(id(read))
        del read
        gc.collect()
    assert reused > 0
