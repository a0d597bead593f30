"""A connection's lifetime is spread (kernel/database_backend): connections opened together,
as a web process's threads open theirs, do not all reach CONN_MAX_AGE in the same second and
reconnect at once (docs/performance.md, "the reconnect storm")."""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.db.backends.postgresql.base import DatabaseWrapper as StockDatabaseWrapper

from kernel.database_backend import base
from kernel.database_backend.base import DatabaseWrapper

pytestmark = pytest.mark.django_db(transaction=True)

MAX_AGE = 60
THREADS = 16  # a web process's connections: 2 processes x 8 threads in the compose shape


def lifetimes(wrapper_class, *, max_age=MAX_AGE) -> list[float]:
    """Connect `THREADS` connections one after another, as a process's threads do at its
    start, and return how long each may live (its `close_at` from the moment it connected)."""
    out = []
    for i in range(THREADS):
        settings_dict = {**connection.settings_dict, "CONN_MAX_AGE": max_age}
        wrapper = wrapper_class(settings_dict, alias=f"lifetime-{i}")
        began = time.monotonic()
        wrapper.connect()
        try:
            out.append(None if wrapper.close_at is None else wrapper.close_at - began)
        finally:
            wrapper.close()
    return out


def one_second_holds_most(lives: list[float]) -> bool:
    """Whether more than half the connections reach their age within one second."""
    return any(sum(1 for x in lives if start <= x < start + 1) > len(lives) // 2 for start in lives)


def test_connections_opened_together_expire_apart():
    lives = lifetimes(DatabaseWrapper)
    assert all(MAX_AGE * (1 - base.LIFETIME_SPREAD) - 1 <= x <= MAX_AGE for x in lives)
    assert not one_second_holds_most(lives)
    assert max(lives) - min(lives) > 10  # 16 draws over 30 s: almost surely far wider


def test_control_the_stock_backend_expires_them_in_one_second():
    # Django's own backend: every connection lives exactly CONN_MAX_AGE, so connections
    # opened together all close together, which the check above refuses.
    lives = lifetimes(StockDatabaseWrapper)
    assert one_second_holds_most(lives)


def test_control_without_the_spread_they_expire_together(monkeypatch):
    monkeypatch.setattr(base, "LIFETIME_SPREAD", 0.0)
    assert one_second_holds_most(lifetimes(DatabaseWrapper))


def test_persistent_and_closed_at_once_connections_are_left_as_django_has_them():
    assert lifetimes(DatabaseWrapper, max_age=None) == [None] * THREADS
    assert all(x <= 0.5 for x in lifetimes(DatabaseWrapper, max_age=0))
