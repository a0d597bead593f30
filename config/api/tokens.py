"""Token authentication without a database query per request.

`CachedTokenAuthentication` is DRF's token check with the token's user kept in the cache
(Redis) for `API_TOKEN_CACHE_SECONDS`, keyed by a hash of the token (the secret itself never
becomes a Redis key).  The entry is the user row's fields as a tuple, not a pickled model
(issue 26: under half the bytes, and cheaper to write and to read), and without the password
hash, which then stays out of Redis: the rebuilt user has it deferred (read from the database
if anything asks; a `save()` writes only the loaded fields).  The entry is dropped whenever
the user row is saved (deactivation, password change, staff flags) or deleted, and when the
token is deleted.  A bulk `QuerySet.update(is_active=False)` sends no signal: such a change is
seen within the cache time.  Only the user's own row is cached; permissions are still read per
request.  With Redis down every request asks the database, as before.  A token issued by
`accounts.tokens` has its entry written when it is issued, after the commit
(`cache_issued_tokens`, the first request's read and entry), so its first request is a hit.

The cache read and the view's per-client throttle hits (`kernel.web.throttles`) share one
Redis round trip, on one slot of a Redis Cluster too: a token-authenticated request's
throttles are keyed by the token (`{tok:<sha>}`, `kernel.redis_clients.token_ident`), whose
tag its cache key carries, so both keys are known before the lookup.  DRF's tokens are one
per user, so the token's budget is its user's budget (a session's requests, on the site's own
pages, count under the same token: `kernel.web.throttles.client_ident`).  An invalid token's
counts are never used (the request is a 401) and lapse with their window.

This module must not import DRF's views: DRF imports it while loading its settings.
"""

from __future__ import annotations

import functools
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.db import DEFAULT_DB_ALIAS, router, transaction
from django.db.models.base import ModelState
from django.db.models.signals import post_delete, post_save
from django.utils.translation import gettext_lazy as _
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed

from kernel import redis_clients
from kernel.compiled import CompiledRead
from kernel.web.headers import header
from kernel.web.throttles import (
    CLIENT_IDENT_ATTR,
    PREFETCHED_ATTR,
    CacheRateThrottle,
    count_hits_with_get,
)


@functools.cache
def _user_model():
    # Fixed once the apps are loaded, as `_cached_fields` (made from it) assumes: asked of
    # the app registry on every token check it was ~10 Python calls (issue 26).
    return get_user_model()


@functools.cache
def _cached_fields() -> tuple[str, ...]:
    return tuple(f.attname for f in _user_model()._meta.concrete_fields if f.attname != "password")


@functools.cache
def _token_user_row() -> CompiledRead:
    """A token's user as the cache keeps it (`user_entry`'s values, no password), in one
    statement compiled once per connection: DRF's query (`select_related("user")`) made a
    Token and a User instance for every first request of a token, only for the user to be
    turned into that entry (issue 26: every loser of a sale's rush is a token's first
    request).  Made on first use: the user model is only known once the apps are loaded."""
    user_model = get_user_model()
    return CompiledRead(
        user_model,
        lambda key: user_model._base_manager.filter(auth_token__key=key).values_list(
            *_cached_fields()
        )[:1],
        key=str,
    )


def user_entry(user) -> tuple:
    """What the cache keeps for a token's user: the field names (an entry written for other
    fields, by another release, is a miss), the database alias it was read from, the values."""
    names = _cached_fields()
    return names, user._state.db, tuple(getattr(user, name) for name in names)


def user_from_entry(entry):
    """The user a cache entry describes, or None when it is no entry of `user_entry`'s
    (missing, unreadable, another shape)."""
    if not (isinstance(entry, tuple) and len(entry) == 3 and entry[0] == _cached_fields()):
        return None
    names, db, values = entry
    # Made as unpickling the model made it (no __init__, no init signals), which is also
    # cheaper than `from_db`: the fields left out (the password) read as deferred.
    model = _user_model()
    user = model.__new__(model)
    user.__dict__.update(zip(names, values, strict=True))
    user._state = ModelState()
    user._state.adding, user._state.db = False, db
    return user


def _user_of_token(key: str):
    """The token's user read as the cache keeps it (`_token_user_row`, rebuilt by
    `user_from_entry`), or None when no token has that key."""
    # The database DRF's `Token.objects` read would use: the entry remembers it.
    alias = router.db_for_read(Token)
    rows = _token_user_row().rows(using=alias, key=key)
    return user_from_entry((_cached_fields(), alias, rows[0])) if rows else None


def cache_issued_tokens(keys: list[str]) -> None:
    """accounts.tokens' hook, run after the commit that issued the tokens (or let their users
    in from a waiting room): each token's user cached as its first request would cache it
    (the same fields, the same entry), all read in one statement and written in one call, so
    that first request is a hit.  An inactive user, or a token gone by now, is left to its
    first request (a 401 then, as before).  Redis down: the write is lost, not raised."""
    entries = {
        token_cache_key(key): user_entry(user)
        for key, user in _users_of_tokens(keys).items()
        if user.is_active
    }
    if entries:
        cache.set_many(entries, settings.API_TOKEN_CACHE_SECONDS)


def _users_of_tokens(keys: list[str]) -> dict:
    """{key: its user as `_user_of_token` reads it} for the keys that are tokens, in one
    statement."""
    alias = router.db_for_read(Token)
    names = _cached_fields()
    rows = (
        get_user_model()
        ._base_manager.using(alias)
        .filter(auth_token__key__in=keys)
        .values_list("auth_token__key", *names)
    )
    return {key: user_from_entry((names, alias, tuple(values))) for key, *values in rows}


def token_cache_key(key: str) -> str:
    return _cache_key_of(redis_clients.token_ident(redis_clients.token_digest(key)))


def _cache_key_of(ident: str) -> str:
    # The token's client tag: its throttle windows hash to the same slot (module docstring).
    return "auth:token:" + redis_clients.user_tag(ident)


class _AuthorizationOnly:
    """What DRF's `TokenAuthentication.authenticate` reads of the request: `headers`, for
    `get_authorization_header`.  Only the Authorization header is in it, read from the environ
    (kernel.web.headers), so a token request no longer builds `request.headers`, a dict of
    every header the client sent (issue 26).  DRF parses and judges the value as before."""

    __slots__ = ("headers",)

    def __init__(self, request) -> None:
        value = header(request, "Authorization")
        self.headers = {} if value is None else {"authorization": value}


class CachedTokenAuthentication(TokenAuthentication):
    _request = None

    def authenticate(self, request):
        # DRF makes one authenticator per request; the request tells which view (and so
        # which throttles) the credentials are checked for.
        self._request = request
        return super().authenticate(_AuthorizationOnly(request))

    def authenticate_credentials(self, key: str):
        ident = redis_clients.token_ident(redis_clients.token_digest(key))
        cache_key = _cache_key_of(ident)
        user = self._cached_user(cache_key, ident)
        if user is None or not user.is_active:
            # Unknown, inactive or not cached: DRF's query and its error messages.
            user = self._credentials_from_database(key)
            cache.set(cache_key, user_entry(user), settings.API_TOKEN_CACHE_SECONDS)
        if self._request is not None:
            setattr(self._request, CLIENT_IDENT_ATTR, ident)
        return user, key

    def _credentials_from_database(self, key: str):
        """The user of DRF's `TokenAuthentication.authenticate_credentials`, read as the cache
        keeps it (`_token_user_row`, the user built by `user_from_entry`, as every later
        request of the token gets it); DRF's answers and error messages."""
        if self.get_model() is not Token:  # a subclass with its own token model: DRF's way
            return super().authenticate_credentials(key)[0]
        user = _user_of_token(key)
        if user is None:
            raise AuthenticationFailed(_("Invalid token."))
        if not user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        return user

    def _cached_user(self, cache_key: str, ident: str):
        """The cached user, with the hits of the view's per-client throttles counted in the
        same round trip (the keys share the token's tag: one slot, one node)."""
        hits = self._throttle_hits(ident)
        # The context's cache looked up once for the key, the round trip and the decoding.
        backend = caches[DEFAULT_CACHE_ALIAS]
        fetched = (
            count_hits_with_get(backend.make_key(cache_key), hits, backend=backend)
            if hits
            else None
        )
        if fetched is None:
            return user_from_entry(backend.get(cache_key))
        raw, counts = fetched
        if self._request is not None:
            setattr(self._request, PREFETCHED_ATTR, counts)
        return user_from_entry(redis_clients.decode_cache_entry(raw, backend=backend))

    def _throttle_hits(self, ident: str) -> list[tuple[str, int]]:
        view = (getattr(self._request, "parser_context", None) or {}).get("view")
        if view is None:
            return []
        now = time.time()
        hits = []
        for throttle in view.get_throttles():
            if not isinstance(throttle, CacheRateThrottle) or not throttle.per_user:
                continue
            rate = throttle.rate()
            if rate is not None:
                _limit, period = rate
                hits.append((throttle.window_key(ident, period=period, now=now), period))
        return hits


def _forget(cache_keys: list[str]) -> None:
    """Drop the entries now and again after commit: a request that re-cached the user
    between the two still saw the uncommitted (old) row."""
    if not cache_keys:
        return
    cache.delete_many(cache_keys)
    transaction.on_commit(lambda: cache.delete_many(cache_keys))


def forget_token(*, key: str) -> None:
    _forget([token_cache_key(key)])


def forget_tokens_of(*, user_id: int) -> None:
    keys = Token.objects.filter(user_id=user_id).values_list("key", flat=True)
    _forget([token_cache_key(key) for key in keys])


def _on_token_deleted(sender, instance: Token, **kwargs) -> None:
    forget_token(key=instance.key)


def _on_user_changed(sender, instance, **kwargs) -> None:
    forget_tokens_of(user_id=instance.pk)


def connect_token_cache_invalidation() -> None:
    """Called once from `config.api.apps.ApiConfig.ready`."""
    post_delete.connect(_on_token_deleted, sender=Token, dispatch_uid="token-cache-token")
    user_model = get_user_model()
    post_save.connect(_on_user_changed, sender=user_model, dispatch_uid="token-cache-user-save")
    post_delete.connect(_on_user_changed, sender=user_model, dispatch_uid="token-cache-user-del")


def warm_connection(driver_connection) -> None:
    """A new database connection's warm-up (config/warmup.py): the token read for a key no
    token has, so its tables' catalogue entries are loaded before a customer's request."""
    sql, params = _token_user_row().sql(using=DEFAULT_DB_ALIAS, key="")
    driver_connection.execute(sql, params).fetchall()
