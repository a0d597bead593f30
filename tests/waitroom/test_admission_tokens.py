"""Admission writes the admitted customers' token entries again (accounts.tokens'
`refresh_token_entries`, issue 26): they hold at once, and a queue outlasts the entry a login
wrote, so without it each admitted API customer's first hold of the rush would read its user
from the database.  Those still waiting, and an inactive user, get no entry."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone
from rest_framework.authtoken.models import Token

from config.api import tokens
from tests.waitroom.room_helpers import make_customers, protect, room_redis, small_flight
from waitroom import admission, joining

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["room_redis"]  # the fixture, used by name


def later():
    """Far enough after the room opened for the rate to let someone in."""
    return timezone.now() + timedelta(seconds=45)


def cached(token: Token):
    return cache.get(tokens.token_cache_key(token.key))


def entry_of(token: Token) -> tuple:
    """The entry the token's first request would write (DRF's user, `user_entry`)."""
    return tokens.user_entry(Token.objects.select_related("user").get(key=token.key).user)


def queue_of_three(rate_per_minute: int = 2):
    """A waiting room with three customers queued, whose token entries the wait outlasted
    (dropped), and who may be let in `rate_per_minute` at a time."""
    sale = protect(small_flight(rows=5), rate=rate_per_minute)
    customers = make_customers(3)
    made = [Token.objects.create(user=c) for c in customers]
    for customer in customers:
        joining.join_queue(room_id=sale.pk, customer=customer)
    cache.delete_many([tokens.token_cache_key(t.key) for t in made])
    return sale, customers, made


def admitted_tokens(sale, made: list[Token]) -> list[Token]:
    from waitroom.models import Admission

    ids = set(Admission.objects.filter(room=sale).values_list("customer_id", flat=True))
    return [t for t in made if t.user_id in ids]


def test_the_admitted_have_their_token_entries_and_the_waiting_none(room_redis):
    sale, _customers, made = queue_of_three()
    admission.admit_shoppers(room_id=sale.pk, now=later())
    inside = admitted_tokens(sale, made)
    assert 1 <= len(inside) < len(made), "the test needs some admitted and some waiting"
    for token in made:
        assert cached(token) == (entry_of(token) if token in inside else None)


def test_control_without_the_refresh_the_admitted_have_no_entry(room_redis, monkeypatch):
    monkeypatch.setattr(admission, "refresh_token_entries", lambda *, user_ids: None)
    sale, _customers, made = queue_of_three()
    admission.admit_shoppers(room_id=sale.pk, now=later())
    inside = admitted_tokens(sale, made)
    assert inside and all(cached(t) is None for t in inside)


def test_an_admitted_user_deactivated_meanwhile_gets_no_entry(room_redis):
    sale, customers, made = queue_of_three(rate_per_minute=600)
    customers[0].is_active = False
    customers[0].save(update_fields=["is_active"])
    admission.admit_shoppers(room_id=sale.pk, now=later())
    assert admitted_tokens(sale, made) == made
    assert cached(made[0]) is None
    assert [cached(t) for t in made[1:]] == [entry_of(t) for t in made[1:]]


def test_many_tokens_are_read_as_the_first_request_reads_one():
    """The hook's one statement for many keys gives each token the user `_user_of_token`
    gives it; a key that is no token is left out."""
    made = [Token.objects.create(user=c) for c in make_customers(3)]
    users = tokens._users_of_tokens([t.key for t in made] + ["no-such-token"])
    assert sorted(users) == sorted(t.key for t in made)
    for token in made:
        one = tokens._user_of_token(token.key)
        assert tokens.user_entry(users[token.key]) == tokens.user_entry(one) == entry_of(token)
