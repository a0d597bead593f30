"""Logging filters wired in `settings.LOGGING`."""

from __future__ import annotations

import logging

# Answers that are the normal outcome of a race, not something for an operator to look at:
# in a flash sale most holds lose (409 seat taken / sold out).
EXPECTED_STATUSES = frozenset({409})


class SkipExpectedConflicts(logging.Filter):
    """Drop `django.request`'s "Conflict: /api/bookings" WARNING for a race's losers."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "status_code", None) not in EXPECTED_STATUSES
