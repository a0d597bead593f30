"""The request id of whatever this thread or task is doing, for logs and follow-up tasks.

Web requests get one from RequestIdMiddleware (the caller's X-Request-ID when it looks sane,
else a fresh one); Celery tasks inherit the id of the request (or task) that queued them
through a message header (config.celery)."""

from __future__ import annotations

import re
import uuid
from contextvars import ContextVar

HEADER = "X-Request-ID"
# What a proxy or client may hand us: short, and no characters that could forge a log line.
_VALID = re.compile(r"^[A-Za-z0-9._:-]{8,128}$")
_current: ContextVar[str | None] = ContextVar("request_id", default=None)


def new_request_id() -> str:
    return uuid.uuid4().hex


def accept_or_new(candidate: str | None) -> str:
    if candidate and _VALID.match(candidate):
        return candidate
    return new_request_id()


def get_request_id() -> str | None:
    return _current.get()


def set_request_id(value: str | None):
    return _current.set(value)


def reset_request_id(token) -> None:
    _current.reset(token)
