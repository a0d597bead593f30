"""Per-user rate limits counted in the shared cache (Redis in production).

DRF's SimpleRateThrottle reads a history list, appends and writes it back, so two workers can
both let a request through on the last slot.  Here each window is one counter bumped with an
atomic INCR: across all workers exactly `limit` requests pass per window.  Fixed windows allow
a burst of up to 2x at a window edge, which is fine for abuse control.

On Redis the check is one round trip: INCRBY and EXPIRE in one pipeline.  When Redis does not
answer, the throttle fails open: it must never be the reason a sale stops.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence

from django.core.cache import cache
from django.utils.functional import lazy
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from kernel import redis_clients, redis_own_connection
from kernel.web.client_ip import client_ip

logger = logging.getLogger(__name__)
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _redis_client(backend=None):
    """The cache's (`backend`, by default the context's cache) raw Redis client, or None when
    the cache is not Redis (embedded mode)."""
    client = getattr(cache if backend is None else backend, "client", None)
    if client is None or not hasattr(client, "get_client"):
        return None
    from redis.exceptions import RedisError

    try:
        return client.get_client(write=True)
    except RedisError:  # a cluster none of whose nodes answer: the cache's path fails open
        return None


def count_hit(key: str, *, period: int) -> int | None:
    """Count one request in the window `key`; the count so far, or None if uncountable."""
    redis = _redis_client()
    if redis is None:
        cache.add(key, 0, timeout=period + 1)
        try:
            return cache.incr(key)
        except ValueError:  # the window's key expired between add() and incr()
            cache.add(key, 1, timeout=period + 1)
            return 1
    from redis.exceptions import RedisError

    raw_key = cache.make_key(key)
    try:
        pipe = redis.pipeline(transaction=False)
        pipe.incr(raw_key)
        # The key is per window, so renewing its expiry on every hit is harmless (and needs
        # no EXPIRE NX, which Redis < 7 lacks).
        pipe.expire(raw_key, period + 1)
        count, _ = pipe.execute()
    except RedisError as exc:
        logger.info("throttle: Redis unreachable, letting the request through (%s)", exc)
        return None
    return int(count)


def parse_rate(rate: str) -> tuple[int, int]:
    """ "30/min" -> (30, 60)."""
    count, period = rate.split("/")
    return int(count), PERIODS[period[0]]


def _rate_text(scope: str) -> str:
    return api_settings.DEFAULT_THROTTLE_RATES.get(scope) or "unlimited"


# The configured rate of a scope, e.g. "30/min", read when the schema is rendered (not at
# import: settings may change), for the 429 descriptions.
rate_text = lazy(_rate_text, str)


# The token check's round trip as one command (issue 26): GET the cached user (KEYS[1]), then
# INCR each throttle window (KEYS[2..]) and renew its expiry (ARGV: seconds, one per window).
# One EVALSHA is one command for redis-py to pack and one reply to parse, where the pipeline
# was 1 + 2 per window.  Every key carries the token's tag (`config.api.tokens`), so the script
# runs on one node of a Redis Cluster.  Lua's false is Redis's nil: a missing user reads None.
_GET_AND_COUNT = """
local out = {redis.call('GET', KEYS[1]) or false}
for i = 2, #KEYS do
  out[i] = redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ARGV[i - 1])
end
return out
"""
_GET_AND_COUNT_SHA = hashlib.sha1(_GET_AND_COUNT.encode()).hexdigest()


def count_hits_with_get(
    get_key: str, hits: Sequence[tuple[str, int]], *, backend=None
) -> tuple[bytes | None, dict[str, int | None]] | None:
    """One round trip for a per-user request: GET the (already made) cache key `get_key` and
    count one hit in each window of `hits` (`(key, period)`, keys as `count_hit` takes them).

    The raw value and the counts; a count of None means "uncountable" (Redis did not answer:
    the throttle fails open, as `count_hit` does).  None when the cache is not Redis (embedded
    mode): the caller then asks the cache the ordinary way.  `backend`: the cache, when the
    caller has it at hand (`caches["default"]`: each `cache.` looks the context's up)."""
    backend = cache if backend is None else backend
    redis = _redis_client(backend)
    if redis is None:
        return None
    from redis.exceptions import RedisError

    keys = [get_key, *(backend.make_key(key) for key, _ in hits)]
    # The key is per window, so renewing its expiry on every hit is harmless (and needs no
    # EXPIRE NX, which Redis < 7 lacks).
    periods = [period + 1 for _, period in hits]
    try:
        # On the thread's own connection (no retry: a failure fails open, just below); a
        # restarted or new node answers NOSCRIPT and EVAL runs and caches the text there.
        replies = redis_own_connection.run_script(
            redis, _GET_AND_COUNT, _GET_AND_COUNT_SHA, keys, periods
        )
    except RedisError as exc:
        logger.info("throttle: Redis unreachable, letting the request through (%s)", exc)
        return None, {key: None for key, _ in hits}
    counts = {key: int(replies[1 + i]) for i, (key, _) in enumerate(hits)}
    return replies[0], counts


# Counts taken ahead, in the token check's round trip (`config.api.tokens`), by window key.
PREFETCHED_ATTR = "_seatkeeper_throttle_counts"
# Who the request's client is for the throttles, when its authenticator says so: the token
# check names a token-authenticated client by its token ("tok:<sha>", `redis_clients.
# token_ident`), whose tag its cached user shares (one slot, one pipeline).
CLIENT_IDENT_ATTR = "_seatkeeper_client_ident"


def client_ident(user) -> str:
    """A user's client ident when the request did not bring the user's API token (a
    session: the site's pages): that token's all the same (DRF's tokens are one per user),
    so the pages and the API share one budget; "user:<pk>" for a user with no token."""
    from rest_framework.authtoken.models import Token

    key = Token.objects.filter(user_id=user.pk).values_list("key", flat=True).first()
    if key is None:
        return f"user:{user.pk}"
    return redis_clients.token_ident(redis_clients.token_digest(key))


class CacheRateThrottle(BaseThrottle):
    scope: str = ""
    # Counted per authenticated client (`ident`'s "tok:<sha>" or "user:<pk>"): such a
    # throttle's hit can be counted in the token check's round trip.  Throttles keyed
    # otherwise say False.
    per_user: bool = True

    def __init__(self) -> None:
        self._wait: float | None = None

    def rate(self) -> tuple[int, int] | None:
        # Read per request, not at import, so settings overrides (tests, ops) take effect.
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        return parse_rate(rate) if rate else None

    def ident(self, request) -> str:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            # An API token's client is its token (DRF's tokens are one per user, so this is
            # the user's API budget); a session's is the user.
            return getattr(request, CLIENT_IDENT_ATTR, None) or client_ident(user)
        return f"ip:{self.get_ident(request)}"

    def get_ident(self, request) -> str:
        # Not DRF's: with NUM_PROXIES unset it would trust a client-written X-Forwarded-For.
        return client_ip(request)

    def window_key(self, ident: str, *, period: int, now: float) -> str:
        # The client's hash tag: all its windows (every scope) in one slot, one pipeline.
        return f"throttle:{self.scope}:{redis_clients.user_tag(ident)}:{int(now // period)}"

    def allow_request(self, request, view) -> bool:
        rate = self.rate()
        if rate is None:
            return True
        limit, period = rate
        now = time.time()
        window = int(now // period)
        key = self.window_key(self.ident(request), period=period, now=now)
        prefetched = getattr(request, PREFETCHED_ATTR, {})
        # Already counted with the token check when the window is the same.
        count = prefetched.pop(key) if key in prefetched else count_hit(key, period=period)
        if count is None:  # cache unreachable: fail open, never block sales
            return True
        self._wait = (window + 1) * period - now
        return count <= limit

    def wait(self) -> float | None:
        return self._wait


class HoldsThrottle(CacheRateThrottle):
    """Creating holds: every hold locks seat rows, so one client must not hog them."""

    scope = "holds"


class PaymentsThrottle(CacheRateThrottle):
    scope = "payments"


class AuthThrottle(CacheRateThrottle):
    """Token requests, per client address: slows down password spraying (docs/security.md)."""

    scope = "auth"
    per_user = False

    def ident(self, request) -> str:
        # The endpoint authenticates nobody before it runs: the address is all there is.
        return f"ip:{self.get_ident(request)}"


class AuthAccountThrottle(CacheRateThrottle):
    """Token requests, per account named in the body (whatever the address): one account
    cannot be hammered from many addresses.  The name is hashed, so the key stays short."""

    scope = "auth_account"
    per_user = False

    def ident(self, request) -> str:
        data = request.data if isinstance(request.data, dict) else {}
        username = data.get("username")
        name = username.strip().casefold() if isinstance(username, str) else ""
        return "account:" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:32]
