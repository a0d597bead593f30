"""Turning lock contention into a polite, retryable answer (the pretix way)."""

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from django.db import OperationalError

from bookings.errors import TooBusy

P = ParamSpec("P")
R = TypeVar("R")


def is_lock_timeout(exc: BaseException) -> bool:
    cause = exc.__cause__
    return type(cause).__name__ in {"LockNotAvailable", "QueryCanceled"} or (
        "database is locked" in str(exc)
    )


def lock_errors_as_too_busy(func: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except OperationalError as exc:
            if is_lock_timeout(exc):
                raise TooBusy() from exc
            raise

    return wrapper
