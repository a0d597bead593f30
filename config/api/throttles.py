"""Per-user rate limits counted in the shared cache (Redis in production).

DRF's SimpleRateThrottle reads a history list, appends and writes it back, so two workers can
both let a request through on the last slot.  Here each window is one counter bumped with the
cache's atomic INCR: across all workers exactly `limit` requests pass per window.  Fixed
windows allow a burst of up to 2x at a window edge, which is fine for abuse control.
"""

from __future__ import annotations

import time

from django.core.cache import cache
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from config.client_ip import client_ip

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """ "30/min" -> (30, 60)."""
    count, period = rate.split("/")
    return int(count), PERIODS[period[0]]


class CacheRateThrottle(BaseThrottle):
    scope: str = ""

    def __init__(self) -> None:
        self._wait: float | None = None

    def rate(self) -> tuple[int, int] | None:
        # Read per request, not at import, so settings overrides (tests, ops) take effect.
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        return parse_rate(rate) if rate else None

    def ident(self, request) -> str:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return f"user:{user.pk}"
        return f"ip:{self.get_ident(request)}"

    def get_ident(self, request) -> str:
        # Not DRF's: with NUM_PROXIES unset it would trust a client-written X-Forwarded-For.
        return client_ip(request)

    def allow_request(self, request, view) -> bool:
        rate = self.rate()
        if rate is None:
            return True
        limit, period = rate
        now = time.time()
        window = int(now // period)
        key = f"throttle:{self.scope}:{self.ident(request)}:{window}"
        cache.add(key, 0, timeout=period + 1)
        try:
            count = cache.incr(key)
        except ValueError:  # the window's key expired between add() and incr()
            cache.add(key, 1, timeout=period + 1)
            count = 1
        if count is None:  # cache unreachable (IGNORE_EXCEPTIONS): fail open, never block sales
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
    """Token requests, per client address: slows down password guessing."""

    scope = "auth"
