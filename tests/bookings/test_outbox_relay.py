"""The relay, consumers and receipts, in one process (the worker tests add the broker)."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.lifecycle import expire_holds
from bookings.models import Notification, NotificationKind, Ticket, TicketStatus
from bookings.notifications import dispatch_notification
from kernel.events import register_consumer, unregister_consumer
from kernel.models import OutboxEvent, ProcessedEvent
from kernel.outbox import kick_relay, redeliver_event, relay_outbox
from tests.bookings.confirming import cancel_confirmed, confirm, emit_refund, hold_and_confirm

pytestmark = pytest.mark.django_db
# Receipts of bookings' own consumers (partners' webhook consumer has its own tests).
# The engine's own consumers' receipts (partners' deliveries and the waiting room's sell-out
# check are other apps' consumers of the same events, tested with their apps).
BOOKINGS_RECEIPTS = ProcessedEvent.objects.exclude(consumer__startswith="partners.").exclude(
    consumer__startswith="waitroom."
)


def relay_all(**kwargs):
    return relay_outbox(now=timezone.now() + timedelta(hours=1), **kwargs)


@pytest.fixture
def failing_once():
    """A consumer that raises the first time it sees each event, then succeeds."""
    seen: list[int] = []

    @register_consumer("booking.confirmed", name="test.flaky")
    def flaky(event):
        seen.append(event.pk)
        if seen.count(event.pk) == 1:
            raise RuntimeError("downstream hiccup")

    yield seen
    unregister_consumer("test.flaky")


def test_confirmation_issues_one_signed_ticket_per_passenger_and_queues_the_email(customer, flight):
    booking = hold_and_confirm(customer, flight)
    event = OutboxEvent.objects.get(event_type="booking.confirmed")

    report = relay_all()

    assert report.published == 1 and report.failed == 0
    event.refresh_from_db()
    assert event.published_at is not None
    tickets = list(Ticket.objects.filter(booking=booking).order_by("seat_no"))
    assert [(t.seat_no, t.passenger_name, t.status, t.fare_class) for t in tickets] == [
        ("12A", "Ana Lima", TicketStatus.VALID, "ECONOMY"),
        ("12B", "Bo Chen", TicketStatus.VALID, "ECONOMY"),
    ]
    assert len({t.code for t in tickets}) == 2
    assert list(Notification.objects.values_list("kind", "to")) == [
        (NotificationKind.BOOKING_CONFIRMED, customer.email)
    ]
    assert set(BOOKINGS_RECEIPTS.values_list("consumer", "event_id")) == {
        ("tickets.issue", event.pk),
        ("email.booking_confirmed", event.pk),
    }
    assert relay_all().claimed == 0  # nothing left


def test_each_event_delivered_three_times_has_its_effects_once(customer, flight):
    hold_and_confirm(customer, flight)
    event = OutboxEvent.objects.get(event_type="booking.confirmed")
    relay_all()
    # Duplicates injected both ways: a redelivery, and the relay finding it unpublished again.
    assert redeliver_event(event_id=event.pk) == []
    OutboxEvent.objects.filter(pk=event.pk).update(published_at=None)
    assert relay_all().published == 1

    assert Ticket.objects.count() == 2
    assert Notification.objects.count() == 1
    assert BOOKINGS_RECEIPTS.count() == 2


def test_a_consumer_raising_once_is_retried_and_every_effect_happens_once(
    customer, flight, failing_once
):
    booking = hold_and_confirm(customer, flight)
    event = OutboxEvent.objects.get(event_type="booking.confirmed")

    first = relay_outbox()
    assert (first.published, first.failed) == (0, 1)
    event.refresh_from_db()
    assert event.published_at is None and event.attempts == 1
    assert "downstream hiccup" in event.last_error
    assert event.next_attempt_at > timezone.now()
    # The consumers that succeeded kept their effects and receipts; the failed one has none.
    assert Ticket.objects.filter(booking=booking).count() == 2
    assert not ProcessedEvent.objects.filter(consumer="test.flaky").exists()
    assert relay_outbox().claimed == 0  # backing off

    second = relay_all()
    assert (second.published, second.failed) == (1, 0)
    assert failing_once == [event.pk, event.pk]
    assert Ticket.objects.filter(booking=booking).count() == 2
    assert Notification.objects.count() == 1
    assert BOOKINGS_RECEIPTS.filter(event=event).count() == 3


def test_events_of_one_booking_keep_their_order_behind_a_failure(
    customer, other_customer, flight, failing_once
):
    arrivals: list[tuple[str, int]] = []

    @register_consumer("booking.cancelled", name="test.record_cancelled")
    def record(event):
        arrivals.append((event.event_type, event.payload["bookingId"]))

    try:
        first = hold_and_confirm(customer, flight)
        cancel_confirmed(first)
        other = hold_and_confirm(other_customer, flight, seats=["20C"], names=["Cy"])
        _, cancelled, released, _ = OutboxEvent.objects.order_by("id")
        assert (cancelled.event_type, released.event_type) == (
            "booking.cancelled",
            "seats.released",
        )

        report = relay_outbox()
        # Both confirmations failed once (the flaky consumer); the first booking's later
        # events wait behind its confirmation instead of overtaking it.
        assert (report.failed, report.deferred, report.published) == (2, 2, 0)
        assert arrivals == []
        assert not OutboxEvent.objects.filter(
            pk__in=[cancelled.pk, released.pk], attempts__gt=0
        ).exists()

        assert relay_all().published == 4
        assert arrivals == [("booking.cancelled", first.pk)]
        assert failing_once[0] < failing_once[-1]
        assert Ticket.objects.get(booking=other).status == TicketStatus.VALID
    finally:
        unregister_consumer("test.record_cancelled")


def test_an_event_failing_for_good_stops_after_max_attempts(customer, flight, settings):
    settings.OUTBOX = {**settings.OUTBOX, "MAX_ATTEMPTS": 2}

    @register_consumer("booking.confirmed", name="test.broken")
    def broken(event):
        raise RuntimeError("always")

    try:
        hold_and_confirm(customer, flight)
        later = [timezone.now() + timedelta(hours=h) for h in (1, 2, 3)]
        assert relay_outbox(now=later[0]).failed == 1
        assert relay_outbox(now=later[1]).failed == 1
        assert relay_outbox(now=later[2]).claimed == 0
        assert OutboxEvent.objects.get(event_type="booking.confirmed").attempts == 2
    finally:
        unregister_consumer("test.broken")


def test_cancellation_revokes_tickets_and_emails_expiry_cancellation_and_refund(
    customer, other_customer, flight
):
    booking = hold_and_confirm(customer, flight)
    relay_all()
    assert Ticket.objects.filter(booking=booking, status=TicketStatus.VALID).count() == 2
    cancel_confirmed(booking)
    emit_refund(booking, refund_id="rf_42", amount="208.00")
    held = hold_seats(
        customer=other_customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["30F"]
    )
    expire_holds(now=held.expires_at + timedelta(seconds=1))

    relay_all()

    assert not OutboxEvent.objects.filter(published_at__isnull=True).exists()
    assert set(Ticket.objects.values_list("status", flat=True)) == {TicketStatus.REVOKED}
    assert all(t.revoked_at for t in Ticket.objects.all())
    kinds = list(Notification.objects.order_by("id").values_list("booking_id", "kind", "context"))
    assert kinds == [
        (booking.pk, NotificationKind.BOOKING_CONFIRMED, {}),
        (booking.pk, NotificationKind.BOOKING_CANCELLED, {"was_confirmed": True}),
        (
            booking.pk,
            NotificationKind.REFUND_ISSUED,
            {"refund_id": "rf_42", "amount": "208.00", "currency": "EUR"},
        ),
        (held.pk, NotificationKind.BOOKING_EXPIRED, {}),
    ]


def test_a_booking_cancelled_before_its_confirmation_is_relayed_gets_no_tickets(customer, flight):
    booking = hold_and_confirm(customer, flight)
    cancel_confirmed(booking)
    relay_all()
    assert not Ticket.objects.exists()
    assert list(Notification.objects.values_list("kind", flat=True)) == [
        NotificationKind.BOOKING_CANCELLED
    ]


# --- side effects wait for commit --------------------------------------------------------------


def test_a_rolled_back_confirmation_dispatches_nothing(
    customer, flight, django_capture_on_commit_callbacks
):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    with (
        django_capture_on_commit_callbacks() as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        confirm(booking)
        raise RuntimeError("payment record failed to save")
    assert callbacks == []
    assert not OutboxEvent.objects.filter(event_type="booking.confirmed").exists()

    # Control: the same confirmation committed kicks the relay exactly once (and pushes the
    # sold seats to live seat maps, and counts the sale for /metrics).
    with django_capture_on_commit_callbacks() as callbacks:
        confirm(booking)
    assert callbacks.count(kick_relay) == 1 and len(callbacks) == 3


def test_a_rolled_back_delivery_sends_no_email(
    customer, flight, django_capture_on_commit_callbacks
):
    hold_and_confirm(customer, flight)
    with (
        django_capture_on_commit_callbacks() as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        relay_all()
        raise RuntimeError("relay transaction lost")
    assert callbacks == []
    assert not Notification.objects.exists()

    with django_capture_on_commit_callbacks() as callbacks:
        relay_all()
    notification = Notification.objects.get()
    assert [(c.func, c.args) for c in callbacks] == [(dispatch_notification, (notification.pk,))]
    assert notification.status == "PENDING"


def test_a_confirmations_delivery_takes_one_savepoint_per_consumer(customer, flight):
    """Each consumer's effect rolls back alone (its savepoint, kernel.outbox._consume); its
    receipt, the tickets and the e-mail's row take none of their own (issue 26)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from kernel.events import consumers_for

    hold_and_confirm(customer, flight)
    with CaptureQueriesContext(connection) as queries:
        assert relay_all().published == 1
    statements = [q["sql"] for q in queries.captured_queries]
    savepoints = [sql for sql in statements if sql.startswith("SAVEPOINT")]
    # relay_outbox's atomic is a savepoint inside the test's transaction: one more.
    assert len(savepoints) == len(consumers_for("booking.confirmed")) + 1, statements
    assert Ticket.objects.filter(booking__customer=customer).count() == 2
    assert Notification.objects.filter(kind=NotificationKind.BOOKING_CONFIRMED).count() == 1
