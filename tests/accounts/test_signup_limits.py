"""Sign-ups per client address are limited (`ACCOUNTS["SIGNUPS_PER_ADDRESS"]`), counted by
the one client-address rule (kernel/web/client_ip.py): 12 accounts from one address in
11.6 s, each with its own pre-queue place, must not be possible."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

User = get_user_model()
PASSWORD = "seats-never-twice-42"


@pytest.fixture
def three_per_hour(settings):
    settings.ACCOUNTS = {**settings.ACCOUNTS, "SIGNUPS_PER_ADDRESS": "3/hour"}


def an_address() -> str:
    """A fresh address per test: the counters live in the run's shared cache."""
    raw = uuid.uuid4().bytes
    return f"10.{raw[0]}.{raw[1]}.{raw[2]}"


def sign_up(name: str, **meta):
    return Client().post(
        reverse("accounts:signup"),
        {
            "username": name,
            "email": f"{name}@example.com",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
        **meta,
    )


def test_the_default_is_written_down():
    from django.conf import settings

    assert settings.ACCOUNTS["SIGNUPS_PER_ADDRESS"] == "5/hour"


def test_sign_ups_from_one_address_stop_at_the_limit(three_per_hour):
    address = an_address()
    tag = uuid.uuid4().hex[:6]
    answers = [sign_up(f"farm{tag}{i}", REMOTE_ADDR=address) for i in range(5)]
    assert [a.status_code for a in answers] == [302, 302, 302, 429, 429]
    refused = answers[3]
    assert "Too many new accounts from this address" in refused.content.decode()
    assert 1 <= int(refused["Retry-After"]) <= 3601
    assert User.objects.filter(username__startswith=f"farm{tag}").count() == 3
    # Control: someone at another address signs up.
    assert sign_up(f"elsewhere{tag}", REMOTE_ADDR=an_address()).status_code == 302


def test_forms_with_mistakes_do_not_use_up_the_budget(three_per_hour):
    address = an_address()
    tag = uuid.uuid4().hex[:6]
    for i in range(5):
        bad = Client().post(
            reverse("accounts:signup"),
            {"username": f"typo{tag}{i}", "email": "x", "password1": "a", "password2": "b"},
            REMOTE_ADDR=address,
        )
        assert bad.status_code == 200
    answers = [sign_up(f"ok{tag}{i}", REMOTE_ADDR=address).status_code for i in range(3)]
    assert answers == [302, 302, 302]


def test_behind_our_proxy_each_customer_has_their_own_budget(three_per_hour, settings):
    """The address is `client_ip()`'s: with NUM_PROXIES=1 the proxy's own address is not the
    customer's, and five customers behind it each sign up."""
    settings.NUM_PROXIES = 1
    proxy = an_address()
    tag = uuid.uuid4().hex[:6]
    answers = [
        sign_up(f"px{tag}{i}", REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=an_address()).status_code
        for i in range(5)
    ]
    assert answers == [302] * 5
    # Control: one customer behind the proxy, however they vary what they write in front.
    customer = an_address()
    forged = [
        sign_up(
            f"one{tag}{i}", REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=f"{an_address()}, {customer}"
        ).status_code
        for i in range(4)
    ]
    assert forged == [302, 302, 302, 429]


def test_without_a_proxy_a_forwarded_header_is_not_believed(three_per_hour, settings):
    settings.NUM_PROXIES = 0
    address = an_address()
    tag = uuid.uuid4().hex[:6]
    answers = [
        sign_up(f"xff{tag}{i}", REMOTE_ADDR=address, HTTP_X_FORWARDED_FOR=an_address()).status_code
        for i in range(4)
    ]
    assert answers == [302, 302, 302, 429]
