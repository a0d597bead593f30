"""A waiting room may let in only accounts with a verified e-mail address (staff set
`require_verified_email` in admin): joining unverified is a 403 problem+json on the API and
a message with a "send me the link" action on the page; the link makes the join work."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client

from accounts import links
from accounts.services import record_verified_email
from tests.api.conftest import client_for
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom.models import QueueEntry, WaitingRoom

pytestmark = pytest.mark.django_db(transaction=True)


def verified_only(sale) -> WaitingRoom:
    WaitingRoom.objects.filter(pk=sale.pk).update(require_verified_email=True)
    return WaitingRoom.objects.get(pk=sale.pk)


def with_email(user, email=None):
    user.email = email or f"{user.username}@example.com"
    user.save(update_fields=["email"])
    return user


def test_the_api_refuses_an_unverified_account_with_a_clear_403(room_redis):
    sale = verified_only(protect(small_flight()))
    customer = with_email(make_customers(1)[0])
    api = client_for(customer)
    url = f"/api/waiting-rooms/{sale.pk}/queue"

    refused = api.post(url)
    assert refused.status_code == 403
    assert refused["Content-Type"] == "application/problem+json"
    body = refused.json()
    assert body["type"].endswith("/email-not-verified")
    assert body["title"] == "Please verify your e-mail address first"
    assert body["sendLinkUrl"] == "/accounts/verify-email/"
    assert not QueueEntry.objects.filter(customer=customer).exists()

    # The link from the e-mail verifies the address; then the same join works.
    token = links.make_token(user_id=customer.pk, email=customer.email)
    assert Client().get(f"/accounts/verify-email/{token}/").status_code == 302
    joined = api.post(url)
    assert joined.status_code == 200, joined.content
    assert joined.json()["status"] in ("PREQUEUE", "WAITING")
    assert QueueEntry.objects.filter(customer=customer).count() == 1


def test_a_room_without_the_flag_lets_unverified_accounts_queue(room_redis):
    """Control: the flag is what refuses, not the missing verification alone."""
    sale = protect(small_flight())
    customer = with_email(make_customers(1)[0])
    assert client_for(customer).post(f"/api/waiting-rooms/{sale.pk}/queue").status_code == 200


def test_a_verified_address_that_changed_since_must_be_verified_again(room_redis):
    sale = verified_only(protect(small_flight()))
    customer = with_email(make_customers(1)[0])
    record_verified_email(user=customer)
    with_email(customer, "elsewhere@example.com")
    assert client_for(customer).post(f"/api/waiting-rooms/{sale.pk}/queue").status_code == 403


def test_the_page_says_why_and_sends_the_link_back_to_the_queue(room_redis, settings):
    settings.PUBLIC_BASE_URL = "http://testserver"
    sale = verified_only(protect(small_flight()))
    customer = with_email(make_customers(1)[0])
    page = Client()
    page.force_login(customer)
    url = f"/waiting-room/{sale.pk}/"

    before = page.get(url).content.decode()
    assert 'id="verify-email-notice"' in before and "Send me the link" in before

    refused = page.post(url + "join/", follow=True)
    html = refused.content.decode()
    assert "Please verify your e-mail address first" in html
    assert 'id="send-verification-link"' in html
    assert not QueueEntry.objects.filter(customer=customer).exists()

    sent = page.post("/accounts/verify-email/", {"email": customer.email, "next": url}, follow=True)
    assert sent.redirect_chain[-1][0] == url
    assert f"We sent a link to {customer.email}" in sent.content.decode()
    assert [m.to for m in mail.outbox] == [[customer.email]]
    link = re.search(r"http://testserver(/accounts/verify-email/\S+/)", mail.outbox[0].body)
    page.get(link.group(1))

    assert 'id="verify-email-notice"' not in page.get(url).content.decode()
    assert page.post(url + "join/")["Location"] == url
    assert QueueEntry.objects.filter(customer=customer).count() == 1


def test_send_me_the_link_is_limited_per_account(room_redis, settings):
    settings.ACCOUNTS = {**settings.ACCOUNTS, "VERIFICATION_LINKS_PER_ACCOUNT": "2/hour"}
    customer = with_email(make_customers(1)[0])
    page = Client()
    page.force_login(customer)
    answers = [
        page.post("/accounts/verify-email/", {"email": customer.email}).status_code
        for _ in range(3)
    ]
    assert answers == [302, 302, 429]
    assert len(mail.outbox) == 2


def test_staff_set_the_flag_in_admin(room_redis):
    from tests.factories import StaffFactory

    sale = protect(small_flight())
    staff = Client()
    staff.force_login(StaffFactory())
    form = staff.get(f"/admin/waitroom/waitingroom/{sale.pk}/change/").content.decode()
    assert 'name="require_verified_email"' in form
