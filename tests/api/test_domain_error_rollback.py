"""A domain error (a sale's loser's 409 is one) marks a request's atomic block for rollback as
DRF's `set_rollback` does, should an alias ever have ATOMIC_REQUESTS, without building every
alias's connection object as DRF's does (issue 26).  The control: with the mark skipped, the
first test fails."""

from __future__ import annotations

import pytest
from django.db import connection, connections, transaction
from rest_framework.views import set_rollback as drf_set_rollback

from config.api import exceptions
from kernel.errors import InvalidRequest

pytestmark = pytest.mark.django_db


def marked_after(handler, *, atomic_requests: bool, monkeypatch) -> bool:
    monkeypatch.setitem(connections.settings["default"], "ATOMIC_REQUESTS", atomic_requests)
    with transaction.atomic():
        handler()
        marked = connection.needs_rollback
        connection.set_rollback(False)
    return marked


@pytest.mark.parametrize("atomic_requests", [True, False])
def test_a_domain_error_marks_the_block_as_drf_does(atomic_requests, monkeypatch):
    def domain_error():
        response = exceptions.problem_exception_handler(InvalidRequest("no"), {})
        assert response.status_code == 400

    ours = marked_after(domain_error, atomic_requests=atomic_requests, monkeypatch=monkeypatch)
    drfs = marked_after(drf_set_rollback, atomic_requests=atomic_requests, monkeypatch=monkeypatch)
    assert ours == drfs == atomic_requests


def test_no_connection_object_is_built_when_no_alias_asks(monkeypatch):
    def built():
        raise AssertionError("connections.all() walked")

    monkeypatch.setattr(connections, "all", built)
    monkeypatch.setattr(type(connections), "__getitem__", lambda self, alias: built())
    exceptions.set_rollback()
