"""E-mails and PDF boarding passes sent by the workers are in the customer's own language
(their stored preference), whatever language the worker process runs in."""

import codecs
import re
from datetime import timedelta

import pytest
from django.utils import timezone, translation

from bookings import ticket_render
from bookings.models import Notification, Ticket
from bookings.notifications import send_notification
from kernel.outbox import relay_outbox
from languages.models import LanguagePreference
from tests.bookings.confirming import hold_and_confirm

pytestmark = pytest.mark.django_db

NBSP = "\u00a0"


def pdf_title(pdf: bytes) -> str:
    """The PDF's /Title (reportlab writes non-ASCII titles as escaped UTF-16)."""
    raw = re.search(rb"/Title \((.*?)(?<!\\)\)", pdf).group(1)
    data = codecs.escape_decode(raw)[0]
    return data[2:].decode("utf-16-be") if data.startswith(b"\xfe\xff") else data.decode()


def confirmation_mail(customer, flight, mailoutbox):
    hold_and_confirm(customer, flight)
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    # The worker runs in whatever language: never the customer's by accident.
    with translation.override("en"):
        send_notification(notification_id=Notification.objects.get().pk)
    return mailoutbox[-1]


@pytest.mark.parametrize(
    ("language", "subject", "greeting", "total", "pdf"),
    [
        ("de", "Ihre Tickets für Flug", "Hallo", f"Insgesamt bezahlt: 208,00{NBSP}€.", "Bordkarte"),
        (
            "ru",
            "Ваши билеты на рейс",
            "Здравствуйте",
            f"Всего оплачено: 208,00{NBSP}€.",
            "Посадочный талон",
        ),
        ("en", "Your tickets for flight", "Hello", "Total paid: €208.00.", "Boarding pass"),
    ],
)
def test_confirmation_email_and_pdf_in_the_customers_language(
    customer, flight, mailoutbox, language, subject, greeting, total, pdf
):
    LanguagePreference.objects.create(user=customer, language=language)
    message = confirmation_mail(customer, flight, mailoutbox)
    html = message.alternatives[0][0]
    assert message.subject == f"{subject} {flight.code}"
    assert message.body.startswith(greeting) and total in message.body
    assert f'<html lang="{language}">' in html and total in html
    titles = [pdf_title(content) for _n, content, _m in message.attachments]
    assert titles and all(title.startswith(pdf) for title in titles), titles


def test_without_a_preference_the_email_is_in_the_default_language(customer, flight, mailoutbox):
    message = confirmation_mail(customer, flight, mailoutbox)
    assert message.subject.startswith("Your tickets for flight")
    assert "Total paid: €208.00." in message.body


def test_boarding_pass_labels_and_times_in_each_language(customer, flight):
    hold_and_confirm(customer, flight)
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    ticket = Ticket.objects.order_by("id").first()
    with translation.override("de"):
        rows = dict(ticket_render.ticket_rows(ticket))
        assert rows["Reisender"] == "Ana Lima" and rows["Gate"] == "siehe Anzeigen"
        assert rows["Platz"] == "12A" and rows["Tarifklasse"] == "Economy"
    with translation.override("ru"):
        rows = dict(ticket_render.ticket_rows(ticket))
        assert rows["Пассажир"] == "Ana Lima" and rows["Выход"] == "см. табло"
        assert "\u202fг., " in rows["Вылет"]  # "вт, 1 дек. 2026 г., 14:05 +07"
        assert rows["Класс тарифа"] == "Эконом"
        assert pdf_title(ticket_render.ticket_pdf(ticket)).startswith("Посадочный талон")
