"""Issuing a token caches its user for the token check (accounts/tokens.py, issue 26): the
token's first request makes no query for its user, as a customer who logged in before the
sale opens; every invalidation still wins; a rolled-back issue caches nothing; Redis down,
a token is still issued."""

from __future__ import annotations

import uuid

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.tokens import issue_token, issue_tokens
from config.api import tokens
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache(settings):
    """A key prefix of this test's own: the login throttles count per username, and the
    factory's usernames repeat from run to run."""
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"},
    }


def token_queries(captured) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if "authtoken_token" in q["sql"]]


def first_request(key: str) -> tuple[int, list[str]]:
    """A request with the token: its status and its queries of the token table."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    with CaptureQueriesContext(connection) as captured:
        status = client.get("/api/bookings").status_code
    return status, token_queries(captured)


def cached(key: str):
    return cache.get(tokens.token_cache_key(key))


def drfs_entry(key: str) -> tuple:
    """The entry the token's first request would write (DRF's user, `user_entry`)."""
    return tokens.user_entry(Token.objects.select_related("user").get(key=key).user)


@pytest.fixture
def issued(customer, django_capture_on_commit_callbacks) -> Token:
    with django_capture_on_commit_callbacks(execute=True):
        return issue_token(user=customer)


def test_an_issued_tokens_first_request_reads_no_user(issued):
    assert cached(issued.key) == drfs_entry(issued.key)
    assert first_request(issued.key) == (200, [])


def test_control_a_token_made_without_the_service_is_read_from_the_database(customer):
    token = Token.objects.create(user=customer)
    status, queries = first_request(token.key)
    assert status == 200 and len(queries) == 1


def test_issuing_again_keeps_the_token_and_caches_its_user(
    customer, django_capture_on_commit_callbacks
):
    token = Token.objects.create(user=customer)
    with django_capture_on_commit_callbacks(execute=True):
        assert issue_token(user=customer).key == token.key
    assert first_request(token.key) == (200, [])


def test_the_entry_has_no_password_hash(issued, customer):
    names, _db, values = cached(issued.key)
    assert "password" not in names and customer.password not in values


def test_the_login_and_sign_up_apis_issue_through_the_service(
    django_capture_on_commit_callbacks, mailoutbox
):
    user = UserFactory()
    with django_capture_on_commit_callbacks(execute=True):
        login = APIClient().post(
            "/api/auth/token",
            {"username": user.username, "password": "correct-horse-battery"},
            format="json",
        )
        signed_up = APIClient().post(
            "/api/accounts",
            {"username": "ana.lima", "email": "ana@example.org", "password": "a-long-phrase-9"},
            format="json",
        )
    assert (login.status_code, signed_up.status_code) == (200, 201)
    for key in (login.json()["token"], signed_up.json()["token"]):
        assert first_request(key) == (200, [])


def test_many_tokens_at_once_are_cached_as_one_by_one(django_capture_on_commit_callbacks):
    users = [UserFactory() for _ in range(3)]
    with django_capture_on_commit_callbacks(execute=True):
        made = issue_tokens(users=users)
    assert [t.user_id for t in made] == [u.pk for u in users]
    for token in made:
        assert cached(token.key) == drfs_entry(token.key)
        assert first_request(token.key) == (200, [])


# --- invalidation still wins -------------------------------------------------------------------


def test_a_user_deactivated_after_the_issue_is_refused(issued, customer):
    customer.is_active = False
    customer.save()
    assert first_request(issued.key)[0] == 401


def test_a_token_deleted_after_the_issue_is_refused(issued):
    issued.delete()
    assert first_request(issued.key)[0] == 401


def test_a_password_change_after_the_issue_drops_the_entry(issued, customer):
    """The entry goes; the token itself stays valid (DRF's tokens outlive a password
    change, as before this service): the next request reads the user anew."""
    customer.set_password("another-horse-battery")
    customer.save()
    assert cached(issued.key) is None
    status, queries = first_request(issued.key)
    assert status == 200 and len(queries) == 1


def test_a_user_deactivated_in_the_issuing_transaction_is_not_cached(
    customer, django_capture_on_commit_callbacks
):
    """The user is read after the commit, as a first request reads it: never the row as
    it was when the token was made."""
    with django_capture_on_commit_callbacks(execute=True):
        token = issue_token(user=customer)
        customer.is_active = False
        customer.save()
    assert cached(token.key) is None
    assert first_request(token.key)[0] == 401


def test_a_rolled_back_issue_caches_nothing(customer, django_capture_on_commit_callbacks):
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        token = issue_token(user=customer)
        raise RuntimeError("the caller's transaction fails")
    assert callbacks == [] and cached(token.key) is None
    assert not Token.objects.filter(key=token.key).exists()


def test_control_written_at_once_a_rolled_back_issue_would_stay_cached(customer, monkeypatch):
    """The test above can fail: with the hook run at once instead of on commit, the token of
    a rolled-back transaction keeps a cache entry (a key no token has any more)."""
    monkeypatch.setattr(transaction, "on_commit", lambda func, robust=False: func())
    with pytest.raises(RuntimeError), transaction.atomic():
        token = issue_token(user=customer)
        raise RuntimeError("the caller's transaction fails")
    assert cached(token.key) is not None
    assert not Token.objects.filter(key=token.key).exists()


def test_redis_down_a_token_is_still_issued(settings, customer, django_capture_on_commit_callbacks):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2},
        }
    }
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        token = issue_token(user=customer)
    assert len(callbacks) == 1 and Token.objects.filter(key=token.key).exists()
    status, queries = first_request(token.key)
    assert status == 200 and len(queries) == 1
