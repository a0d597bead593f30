"""The statement budget of a confirmed booking's delivery by the outbox relay (issue 26).

Four consumers take a confirmation: tickets, the e-mail, the waiting room's sell-out check and
partners' webhooks.  The budget holds what each needs and no more; a statement coming back (a
second read of the booking, the tickets list nobody uses, a per-event read of what a batch
shares) fails it.  The controls put each old read back and watch the budget catch it."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bookings import outbox_handlers, tickets
from bookings.models import Notification, NotificationKind, Ticket
from kernel import outbox
from partners import services as partner_services
from tests.bookings.confirming import hold_and_confirm
from tests.bookings.test_outbox_relay import relay_all
from waitroom import outbox_handlers as waitroom_handlers

pytestmark = pytest.mark.django_db

# The relay's own: claim the batch, its aggregates' unpublished events, its savepoint and
# its release (a savepoint inside the test's transaction).
RELAY = 4
# Per event: four consumers, each a SAVEPOINT, a receipt and a RELEASE (12); tickets (booking
# lock, passengers without a ticket, their INSERT: 3); the e-mail (booking lock with its
# customer, passengers without a ticket (none left), the e-mail's exists check and INSERT:
# 4); the event's published UPDATE (1).
PER_EVENT = 12 + 3 + 4 + 1
# Once per batch (kernel.outbox.batch_read): the sale's waiting room and partners' active
# endpoints; no endpoint, so no booking read of partners.
PER_BATCH = 2


def _delivery_statements(customer, other_customer, flight) -> list[str]:
    hold_and_confirm(customer, flight, seats=("12A", "12B"))
    hold_and_confirm(other_customer, flight, seats=("14A",), names=("Cy Diaz",))
    with CaptureQueriesContext(connection) as queries:
        assert relay_all().published == 2
    return [q["sql"] for q in queries.captured_queries]


def test_two_confirmations_of_a_sale_are_delivered_within_the_budget(
    customer, other_customer, flight
):
    statements = _delivery_statements(customer, other_customer, flight)

    assert len(statements) == RELAY + 2 * PER_EVENT + PER_BATCH, "\n".join(statements)
    assert Ticket.objects.filter(booking__sale_id=flight.pk).count() == 3
    assert Notification.objects.filter(kind=NotificationKind.BOOKING_CONFIRMED).count() == 2


def _reads_the_booking_twice(monkeypatch):
    """The old e-mail consumer: the booking locked without its customer, then read again."""
    real = tickets.ensure_tickets

    def ensure(*, booking_id, with_customer=False):
        booking = real(booking_id=booking_id)
        if booking is None or not with_customer:
            return booking
        return outbox_handlers.Booking.objects.select_related("customer").get(pk=booking_id)

    monkeypatch.setattr(tickets, "ensure_tickets", ensure)


def _rereads_the_tickets(monkeypatch):
    real = tickets.ensure_tickets

    def ensure(**kwargs):
        booking = real(**kwargs)
        if booking is not None:
            list(booking.tickets.order_by("id"))
        return booking

    monkeypatch.setattr(tickets, "ensure_tickets", ensure)


def _reads_per_event(monkeypatch):
    def uncached(key, read):
        return read()

    monkeypatch.setattr(waitroom_handlers, "batch_read", uncached)
    monkeypatch.setattr(partner_services, "batch_read", uncached)


@pytest.mark.parametrize(
    ("old_behaviour", "extra"),
    [(_reads_the_booking_twice, 2), (_rereads_the_tickets, 4), (_reads_per_event, 2)],
)
def test_control_the_budget_catches_a_statement_coming_back(
    customer, other_customer, flight, monkeypatch, old_behaviour, extra
):
    old_behaviour(monkeypatch)
    statements = _delivery_statements(customer, other_customer, flight)

    assert len(statements) == RELAY + 2 * PER_EVENT + PER_BATCH + extra
    assert len(statements) != RELAY + 2 * PER_EVENT + PER_BATCH  # the budget's check fails


def test_outside_a_relay_batch_every_call_reads():
    calls = []
    assert outbox.batch_read("k", lambda: calls.append(1) or len(calls)) == 1
    assert outbox.batch_read("k", lambda: calls.append(1) or len(calls)) == 2
