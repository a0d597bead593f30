"""kernel.settled.SettledColumn: a value read once per process; a missing one asked again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from events.models import Event
from kernel.settled import SettledColumn
from tests.events.factories import EventFactory

pytestmark = pytest.mark.django_db


def test_a_found_value_is_read_once_and_a_missing_one_every_time():
    on_sale, draft = EventFactory(), EventFactory(publish=False)
    assert on_sale.sale_id is not None and draft.sale_id is None
    sale_of_event = SettledColumn(Event, "sale_id")
    assert sale_of_event.known(on_sale.pk) is None  # not met yet: no query either
    with CaptureQueriesContext(connection) as first:
        assert sale_of_event(on_sale.pk) == on_sale.sale_id
        assert sale_of_event(draft.pk) is None
        assert sale_of_event(0) is None
    assert len(first) == 3
    with CaptureQueriesContext(connection) as again:
        assert sale_of_event(on_sale.pk) == on_sale.sale_id
        assert sale_of_event.known(on_sale.pk) == on_sale.sale_id
        assert sale_of_event(draft.pk) is None  # a draft may go on sale: asked again
    assert len(again) == 1
    sale_of_event.forget()
    assert sale_of_event.known(on_sale.pk) is None
