"""Issue 11, item 3: password guessing is limited per username and per client address on all
three login doors, and a client cannot pick its own address with X-Forwarded-For."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from kernel.web.client_ip import client_ip
from kernel.web.throttles import AuthThrottle
from tests.factories import StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

RIGHT = "correct-horse-battery"


def token_attempt(username: str, password: str, **meta):
    response = APIClient().post(
        "/api/auth/token", {"username": username, "password": password}, format="json", **meta
    )
    return response.status_code, response


def page_attempt(url: str):
    def attempt(username: str, password: str, **meta):
        response = Client().post(url, {"username": username, "password": password}, **meta)
        # A page login that worked redirects; a wrong password shows the form again (200).
        return {302: 200, 200: 401}.get(response.status_code, response.status_code), response

    return attempt


DOORS = {
    "api-token": token_attempt,
    "accounts-login": page_attempt("/accounts/login/"),
    "admin-login": page_attempt("/admin/login/"),
}


def assert_locked_out(response, door: str) -> None:
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    if door == "api-token":
        assert response["Content-Type"] == "application/problem+json"
        body = response.json()
        assert body["type"].endswith("/locked-out")
        assert "Too many failed logins" in body["detail"]
    else:
        assert b"Too many failed logins" in response.content


def test_forty_forwarded_for_values_do_not_escape_the_limit(settings):
    """The review's attack: 40 wrong passwords, each claiming another address in X-Forwarded-For,
    then the right one.  Today all 40 got 401 and the right password got a token."""
    UserFactory(username="ana")
    answers = [
        token_attempt("ana", f"guess-{i}", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}")[0]
        for i in range(40)
    ]
    # The attempt that reaches the limit is already answered with the lockout.
    assert answers.count(401) == settings.AXES_FAILURE_LIMIT - 1
    assert set(answers[settings.AXES_FAILURE_LIMIT - 1 :]) == {429}
    _, response = token_attempt("ana", RIGHT, HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert_locked_out(response, "api-token")


@pytest.mark.parametrize("door", DOORS)
def test_guessing_one_username_from_many_addresses_locks_that_username(door, settings):
    StaffFactory(username="ana")
    StaffFactory(username="bo")
    attempt = DOORS[door]
    answers = [attempt("ana", f"guess-{i}", REMOTE_ADDR=f"10.1.{i}.1")[0] for i in range(40)]
    # The attempt that reaches the limit is already answered with the lockout.
    assert answers.count(401) == settings.AXES_FAILURE_LIMIT - 1
    assert set(answers[settings.AXES_FAILURE_LIMIT - 1 :]) == {429}
    # The right password from yet another address: still refused, with a clear message.
    _, response = attempt("ana", RIGHT, REMOTE_ADDR="10.9.9.9")
    assert_locked_out(response, door)
    # Somebody else is not locked out.
    assert attempt("bo", RIGHT, REMOTE_ADDR="10.9.9.9")[0] == 200


@pytest.mark.parametrize("door", DOORS)
def test_guessing_many_usernames_from_one_address_locks_that_address(door, settings):
    StaffFactory(username="ana")
    attempt = DOORS[door]
    answers = [attempt(f"user{i}", "guess", REMOTE_ADDR="10.2.2.2")[0] for i in range(40)]
    # The attempt that reaches the limit is already answered with the lockout.
    assert answers.count(401) == settings.AXES_FAILURE_LIMIT - 1
    assert set(answers[settings.AXES_FAILURE_LIMIT - 1 :]) == {429}
    _, response = attempt("ana", RIGHT, REMOTE_ADDR="10.2.2.2")
    assert_locked_out(response, door)
    assert attempt("ana", RIGHT, REMOTE_ADDR="10.3.3.3")[0] == 200


def test_a_good_login_below_the_limit_works(settings):
    UserFactory(username="ana")
    for i in range(settings.AXES_FAILURE_LIMIT - 2):
        assert token_attempt("ana", f"guess-{i}")[0] == 401
    assert token_attempt("ana", RIGHT)[0] == 200


def test_old_failures_expire_after_the_lockout_time(settings):
    UserFactory(username="ana")
    for i in range(settings.AXES_FAILURE_LIMIT):
        token_attempt("ana", f"guess-{i}")
    assert token_attempt("ana", RIGHT)[0] == 429
    from axes.models import AccessAttempt
    from django.utils import timezone

    AccessAttempt.objects.update(attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME * 2)
    assert token_attempt("ana", RIGHT)[0] == 200


def test_test_client_login_without_a_request_still_works(client):
    """Test helpers (and management commands) authenticate without a request; the lockout
    backend leaves those to ModelBackend instead of raising."""
    UserFactory(username="ana")
    assert client.login(username="ana", password=RIGHT)


# --- whose address is it ---------------------------------------------------------------------


def request(remote_addr="192.0.2.10", forwarded=None):
    meta = {"REMOTE_ADDR": remote_addr}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **meta)


def test_without_proxies_forwarded_for_is_ignored(settings):
    settings.NUM_PROXIES = 0
    assert client_ip(request(forwarded="1.2.3.4")) == "192.0.2.10"


def test_with_one_proxy_the_address_it_appended_is_the_client(settings):
    settings.NUM_PROXIES = 1
    # The client wrote "6.6.6.6" itself; our proxy appended the address it really saw.
    assert client_ip(request(forwarded="6.6.6.6, 198.51.100.4")) == "198.51.100.4"
    assert client_ip(request(forwarded="")) == "192.0.2.10"
    assert client_ip(request(forwarded="not-an-ip")) == "192.0.2.10"
    settings.NUM_PROXIES = 2
    assert client_ip(request(forwarded="6.6.6.6, 198.51.100.4, 10.0.0.2")) == "198.51.100.4"


def test_trusted_proxies_limit_who_may_forward(settings):
    settings.NUM_PROXIES = 1
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert client_ip(request("10.0.0.7", "198.51.100.4")) == "198.51.100.4"
    # A connection straight from the internet cannot claim an address.
    assert client_ip(request("203.0.113.9", "198.51.100.4")) == "203.0.113.9"


def test_the_api_throttle_keys_on_the_connection_not_on_forwarded_for(settings):
    settings.NUM_PROXIES = 0
    throttle = AuthThrottle()
    assert throttle.get_ident(request(forwarded="1.2.3.4")) == "192.0.2.10"
    assert throttle.ident(request(forwarded="5.6.7.8")) == "ip:192.0.2.10"
