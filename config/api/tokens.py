"""Token authentication without a database query per request.

`CachedTokenAuthentication` is DRF's token check with the token's user kept in the cache
(Redis) for `API_TOKEN_CACHE_SECONDS`, keyed by a hash of the token (the secret itself never
becomes a Redis key).  The entry is dropped whenever the user row is saved (deactivation,
password change, staff flags) or deleted, and when the token is deleted.  A bulk
`QuerySet.update(is_active=False)` sends no signal: such a change is seen within the cache
time.  Only the user's own row is cached; permissions are still read per request.  With Redis
down every request asks the database, as before.

This module must not import DRF's views: DRF imports it while loading its settings.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token


def token_cache_key(key: str) -> str:
    return "auth:token:" + hashlib.sha256(key.encode()).hexdigest()[:40]


class CachedTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key: str):
        cache_key = token_cache_key(key)
        user = cache.get(cache_key)
        if user is not None and user.is_active:
            return user, key
        # Unknown, inactive or not cached: DRF's own query and its error messages.
        user, _token = super().authenticate_credentials(key)
        cache.set(cache_key, user, settings.API_TOKEN_CACHE_SECONDS)
        return user, key


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
