"""E-mails: rendered from HTML and text templates, sent after commit, each exactly once."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from bookings.models import Notification, NotificationStatus
from bookings.notifications import redispatch_stale_notifications, send_notification
from kernel.outbox import relay_outbox
from tests.bookings.confirming import cancel_confirmed, emit_refund, hold_and_confirm

pytestmark = pytest.mark.django_db


def relay():
    relay_outbox(now=timezone.now() + timedelta(hours=1))


def send_all():
    for pk in Notification.objects.filter(status="PENDING").values_list("pk", flat=True):
        send_notification(notification_id=pk)


def test_confirmation_email_has_text_html_and_one_pdf_per_ticket(customer, flight, mailoutbox):
    booking = hold_and_confirm(customer, flight)
    relay()
    notification = Notification.objects.get()

    assert send_notification(notification_id=notification.pk) is True
    assert send_notification(notification_id=notification.pk) is False  # already sent

    assert len(mailoutbox) == 1
    message = mailoutbox[0]
    assert message.to == [customer.email]
    assert message.subject == f"Your tickets for flight {flight.code}"
    assert "Ana Lima, seat 12A" in message.body and "Bo Chen, seat 12B" in message.body
    html, mimetype = message.alternatives[0]
    assert mimetype == "text/html" and "Ana Lima" in html and "boarding pass" in html
    assert f"/bookings/{booking.pk}/tickets/" in html
    attachments = [(name, mime) for name, _content, mime in message.attachments]
    assert attachments == [
        (f"boarding-pass-{flight.code}-12A.pdf", "application/pdf"),
        (f"boarding-pass-{flight.code}-12B.pdf", "application/pdf"),
    ]
    assert all(content.startswith(b"%PDF") for _n, content, _m in message.attachments)
    notification.refresh_from_db()
    assert notification.status == NotificationStatus.SENT and notification.sent_at


def test_cancellation_and_refund_emails(customer, flight, mailoutbox):
    booking = hold_and_confirm(customer, flight)
    relay()
    cancel_confirmed(booking)
    emit_refund(booking, refund_id="rf_9", amount="208.00")
    relay()
    send_all()

    subjects = [m.subject for m in mailoutbox]
    assert sorted(subjects) == sorted(
        [
            f"Your tickets for flight {flight.code}",
            f"Your booking for flight {flight.code} is cancelled",
            f"Refund for your booking on flight {flight.code}",
        ]
    )
    refund = next(m for m in mailoutbox if m.subject.startswith("Refund"))
    assert "€208.00" in refund.body and "rf_9" in refund.body
    assert "€208.00" in refund.alternatives[0][0]
    cancelled = next(m for m in mailoutbox if "cancelled" in m.subject)
    assert "no longer valid" in cancelled.body
    assert not cancelled.attachments


def test_a_failed_send_goes_back_to_pending_and_succeeds_on_retry(
    customer, flight, mailoutbox, monkeypatch
):
    hold_and_confirm(customer, flight)
    relay()
    notification = Notification.objects.get()
    real_send = mail.EmailMultiAlternatives.send
    calls = []

    def smtp_down_once(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionRefusedError("smtp down")
        return real_send(self, *args, **kwargs)

    monkeypatch.setattr(mail.EmailMultiAlternatives, "send", smtp_down_once)
    with pytest.raises(ConnectionRefusedError):
        send_notification(notification_id=notification.pk)
    notification.refresh_from_db()
    assert (notification.status, notification.attempts) == (NotificationStatus.PENDING, 1)
    assert "smtp down" in notification.last_error
    assert mailoutbox == []

    assert send_notification(notification_id=notification.pk) is True
    assert len(mailoutbox) == 1


def test_stale_notifications_are_dispatched_again(
    customer, flight, monkeypatch, django_capture_on_commit_callbacks
):
    hold_and_confirm(customer, flight)
    relay()
    stuck = Notification.objects.get()
    Notification.objects.filter(pk=stuck.pk).update(status=NotificationStatus.PREPARING)
    dispatched = []
    monkeypatch.setattr("bookings.notifications.dispatch_notification", dispatched.append)

    assert redispatch_stale_notifications() == 0  # a fresh PREPARING is a worker at work
    with django_capture_on_commit_callbacks(execute=True):
        assert redispatch_stale_notifications(now=timezone.now() + timedelta(minutes=6)) == 1
    assert dispatched == [stuck.pk]
    stuck.refresh_from_db()
    assert stuck.status == NotificationStatus.PENDING


def test_a_send_whose_worker_died_during_the_hand_over_is_never_resent(
    customer, flight, monkeypatch, django_capture_on_commit_callbacks, mailoutbox
):
    """At most once at the SMTP boundary: SENDING means "maybe sent", so no automatic resend."""
    hold_and_confirm(customer, flight)
    relay()
    stuck = Notification.objects.get()
    Notification.objects.filter(pk=stuck.pk).update(status=NotificationStatus.SENDING)
    with django_capture_on_commit_callbacks(execute=True):
        assert redispatch_stale_notifications(now=timezone.now() + timedelta(minutes=6)) == 0
    stuck.refresh_from_db()
    assert stuck.status == NotificationStatus.UNCERTAIN
    assert send_notification(notification_id=stuck.pk) is False
    assert mailoutbox == []


def test_the_receipt_is_written_before_the_message_reaches_the_backend(
    customer, flight, mailoutbox, monkeypatch
):
    hold_and_confirm(customer, flight)
    relay()
    notification = Notification.objects.get()
    seen = []
    real_send = mail.EmailMultiAlternatives.send

    def observe(self, *args, **kwargs):
        seen.append(Notification.objects.get(pk=notification.pk).status)
        return real_send(self, *args, **kwargs)

    monkeypatch.setattr(mail.EmailMultiAlternatives, "send", observe)
    assert send_notification(notification_id=notification.pk) is True
    assert seen == [NotificationStatus.SENDING]
    notification.refresh_from_db()
    assert notification.status == NotificationStatus.SENT
    assert (
        mailoutbox[0].extra_headers["Message-ID"] == f"<notification-{notification.pk}@seatkeeper>"
    )


def test_no_address_no_notification(customer, flight):
    customer.email = ""
    customer.save()
    hold_and_confirm(customer, flight)
    relay()
    assert not Notification.objects.exists()


def test_an_e_mail_is_recorded_without_a_savepoint_and_sent_only_if_its_transaction_commits(
    customer, flight, django_capture_on_commit_callbacks
):
    """queue_notification writes its row in the caller's transaction (no savepoint of its
    own: two round trips fewer per e-mail, issue 26); the send is tied to that transaction."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from bookings.models import NotificationKind
    from bookings.notifications import queue_notification

    booking = hold_and_confirm(customer, flight)
    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks() as sends,
        transaction.atomic(),
    ):
        queue_notification(booking=booking, kind=NotificationKind.BOOKING_EXPIRED)
    # The test's own atomic (a savepoint inside the test's transaction), and no other.
    assert len([q for q in queries.captured_queries if q["sql"].startswith("SAVEPOINT")]) == 1
    assert len(sends) == 1

    with (
        django_capture_on_commit_callbacks() as sends,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        queue_notification(booking=booking, kind=NotificationKind.BOOKING_CANCELLED)
        raise RuntimeError("the caller's work failed")
    assert sends == []
    assert not Notification.objects.filter(kind=NotificationKind.BOOKING_CANCELLED).exists()
