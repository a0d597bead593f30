"""A token's first request reads its user as the cache keeps it (config.api.tokens,
`_token_user_row`, issue 26): the same user, field for field, as DRF's query gave, the same
cache entry, DRF's errors; and kernel.compiled's plain rows answer what the ORM answers."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed

from config.api import tokens
from kernel.compiled import CompiledRead
from kernel.models import OutboxEvent
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

USERS = [
    {},
    {"is_staff": True},
    {"is_superuser": True, "is_staff": True},
    {"first_name": "Zoë", "last_name": "Ørsted-Łukasz", "email": "zoe@example.com"},
    {"last_login": datetime(2026, 12, 1, 8, 30, 15, 123456, tzinfo=UTC)},
]


def drfs_user(key: str):
    """DRF's own query: `Token.objects.select_related("user").get(key=key).user`."""
    return Token.objects.select_related("user").get(key=key).user


def fields_of(user) -> list:
    return [
        (name, type(getattr(user, name)), getattr(user, name)) for name in tokens._cached_fields()
    ]


@pytest.mark.parametrize("shape", USERS)
def test_the_cold_read_gives_drfs_user_field_for_field(shape):
    token = Token.objects.create(user=UserFactory(**shape))
    ours = tokens.CachedTokenAuthentication()._credentials_from_database(token.key)
    theirs = drfs_user(token.key)
    assert type(ours) is type(theirs) and ours == theirs
    assert fields_of(ours) == fields_of(theirs)
    assert (ours._state.db, ours._state.adding) == (theirs._state.db, theirs._state.adding)
    assert tokens.user_entry(ours) == tokens.user_entry(theirs)
    # As a cached user: the password is not read with it, but is there when asked.
    assert "password" not in ours.__dict__
    assert ours.password == theirs.password


def test_a_first_request_caches_the_entry_drfs_user_makes_and_the_next_reads_it():
    token = Token.objects.create(user=UserFactory(first_name="Ana"))
    key = tokens.token_cache_key(token.key)
    cache.delete(key)
    auth = tokens.CachedTokenAuthentication()
    first, _ = auth.authenticate_credentials(token.key)
    assert cache.get(key) == tokens.user_entry(drfs_user(token.key))
    second, _ = auth.authenticate_credentials(token.key)
    assert tokens.user_entry(second) == tokens.user_entry(first)


def test_drfs_errors_for_an_unknown_token_and_an_inactive_user():
    dead = Token.objects.create(user=UserFactory(is_active=False))
    auth = tokens.CachedTokenAuthentication()
    with pytest.raises(AuthenticationFailed) as unknown:
        auth._credentials_from_database("no-such-token")
    assert str(unknown.value.detail) == "Invalid token."
    with pytest.raises(AuthenticationFailed) as inactive:
        auth._credentials_from_database(dead.key)
    assert str(inactive.value.detail) == "User inactive or deleted."


def test_the_401s_over_http_are_drfs(client):
    dead = Token.objects.create(user=UserFactory(is_active=False))
    for key, detail in (
        ("no-such-token", "Invalid token."),
        (dead.key, "User inactive or deleted."),
    ):
        answer = client.get("/api/bookings", HTTP_AUTHORIZATION=f"Token {key}", secure=True)
        assert answer.status_code == 401
        assert answer.json()["detail"] == detail
        assert answer["WWW-Authenticate"] == "Token"


def test_control_a_read_of_the_columns_in_another_order_is_caught(monkeypatch):
    """The comparison above can fail: a read whose columns do not follow the entry's names
    (first and last name swapped)."""
    user_model = type(UserFactory())
    names = list(tokens._cached_fields())
    first, last = names.index("first_name"), names.index("last_name")
    names[first], names[last] = names[last], names[first]
    swapped = CompiledRead(
        user_model,
        lambda key: user_model._base_manager.filter(auth_token__key=key).values_list(*names)[:1],
        key=str,
    )
    monkeypatch.setattr(tokens, "_token_user_row", lambda: swapped)
    token = Token.objects.create(user=UserFactory(first_name="Ana", last_name="Lima"))
    ours = tokens.CachedTokenAuthentication()._credentials_from_database(token.key)
    assert fields_of(ours) != fields_of(drfs_user(token.key))


def _event_payloads() -> CompiledRead:
    return CompiledRead(
        OutboxEvent,
        lambda pk: OutboxEvent.objects.filter(pk=pk).values_list("event_type", "payload"),
        pk=int,
    )


def _an_event() -> OutboxEvent:
    return OutboxEvent.objects.create(
        sale_id=1,
        aggregate_type="booking",
        aggregate_id="1",
        event_type="test",
        payload={"seats": ["12A"], "n": 1},
        created_at=datetime(2026, 12, 6, tzinfo=UTC),
    )


def test_plain_rows_only_for_reads_without_converters():
    """The token read takes the cursor's rows as they are; a read with a converted column (a
    JSON payload) keeps the ORM's iterator, whose converters it needs."""
    token = Token.objects.create(user=UserFactory())
    assert tokens._token_user_row()._compiled("default").plain_rows
    assert tokens._token_user_row().rows(key=token.key) == list(
        type(token.user)
        ._base_manager.filter(auth_token__key=token.key)
        .values_list(*tokens._cached_fields())
    )
    event, read = _an_event(), _event_payloads()
    assert not read._compiled("default").plain_rows
    orm = list(OutboxEvent.objects.filter(pk=event.pk).values_list("event_type", "payload"))
    assert read.rows(pk=event.pk) == orm == [("test", {"seats": ["12A"], "n": 1})]


def test_control_plain_rows_forced_on_a_converted_column_differ_from_the_orm(monkeypatch):
    """Were the JSON read taken as plain rows, it would answer the driver's text, not the
    ORM's value: why `plain_rows` asks for no converters."""
    event, read = _an_event(), _event_payloads()
    monkeypatch.setattr(read._compiled("default"), "plain_rows", True)
    assert read.rows(pk=event.pk) != [("test", {"seats": ["12A"], "n": 1})]


def test_a_cached_user_is_of_the_apps_user_model():
    """`user_from_entry` builds the user model remembered once (`tokens._user_model`), which
    must be the one the app registry names."""
    from django.contrib.auth import get_user_model

    user = UserFactory()
    rebuilt = tokens.user_from_entry(tokens.user_entry(user))
    assert type(rebuilt) is get_user_model()
    assert fields_of(rebuilt) == fields_of(user)


def test_control_another_remembered_model_is_caught(monkeypatch):
    from django.contrib.auth import get_user_model

    user = UserFactory()
    monkeypatch.setattr(tokens, "_user_model", lambda: Token)
    assert type(tokens.user_from_entry(tokens.user_entry(user))) is not get_user_model()
