"""Issue a customer's API token: the one place a token is made (the login and sign-up APIs,
the benches' customers); and have the entries of tokens already issued written again
(`refresh_token_entries`, the waiting room's admission).

The token check keeps a token's user in the cache (config.api.tokens); a token's first
request used to miss it, read the user from the database and write the entry.  In a sale's
rush every loser was such a first request (issue 26), although a real customer logs in before
the sale opens.  So issuing a token also has the entry written, after the transaction commits:
the cost moves from the token's first request to its issue (the login).

The entry is written by the token check's own hook (`when_tokens_issued`, filled in by
config.api's `ready`: the cache's rules stay in one place, and this layer imports none of
the API's), which reads the user after the commit exactly as a first request reads it.  The
guarantees are a first request's: a token of a rolled-back transaction is never cached, and a
change of the user after the commit drops the entry as it drops any other.  A failed write
(Redis down) is logged, never raised: the token is issued, and its first request reads the
database as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from rest_framework.authtoken.models import Token

# Called after the commit with the keys of tokens just issued (config.api.tokens).
_issued_hooks: list[Callable[[list[str]], None]] = []


def when_tokens_issued(hook: Callable[[list[str]], None]) -> None:
    """Have `hook(keys)` run after each commit that issued tokens (once per hook)."""
    if hook not in _issued_hooks:
        _issued_hooks.append(hook)


def issue_token(*, user: AbstractBaseUser) -> Token:
    """The user's API token, made if it has none (DRF's tokens are one per user), its user
    cached for the token check once the transaction commits."""
    with transaction.atomic():
        token, _created = Token.objects.get_or_create(user=user)
        _announce_on_commit([token.key])
    return token


def issue_tokens(*, users: Iterable[AbstractBaseUser]) -> list[Token]:
    """New tokens for users that have none (one INSERT, one cache write after the commit):
    many customers at once, as the benches make them."""
    with transaction.atomic():
        tokens = Token.objects.bulk_create(Token(user=u, key=Token.generate_key()) for u in users)
        _announce_on_commit([t.key for t in tokens])
    return tokens


def refresh_token_entries(*, user_ids: Iterable[int]) -> None:
    """Have the users' token entries written again once the transaction commits, as when
    their tokens were issued.  A waiting room lets its shoppers in to hold at once, and the
    queue outlasts the entry (API_TOKEN_CACHE_SECONDS): without this, each admitted API
    customer's first hold of the rush would read its user from the database again.  The
    tokens are looked up after the commit too, so the admission's transaction (the room's
    lock) waits for none of it."""
    ids = list(user_ids)
    if not ids:
        return

    def announce() -> None:
        keys = list(Token.objects.filter(user_id__in=ids).values_list("key", flat=True))
        if keys:
            for hook in _issued_hooks:
                hook(keys)

    transaction.on_commit(announce, robust=True)


def _announce_on_commit(keys: list[str]) -> None:
    for hook in _issued_hooks:
        transaction.on_commit(lambda hook=hook: hook(keys), robust=True)
