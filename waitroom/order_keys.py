"""Order keys of queue entries: 1..n for the shuffled pre-queue, FIFO_BASE + a sequence
number for everyone who joins after the shuffle (docs/architecture.md, "Waiting room").
The priority lane (presale codes) has the same keys minus PRIORITY_OFFSET: negative, so
the lane sorts before every general key and keeps its own shuffled-then-FIFO order."""

from __future__ import annotations

from django.db import connection
from django.db.models import Max

from waitroom.models import QueueEntry

FIFO_BASE = 10**12
PRIORITY_OFFSET = 10**15


def in_lane(order_key: int, lane: str) -> int:
    """The key `order_key` (1..n or FIFO) takes in `lane`."""
    return order_key - PRIORITY_OFFSET if lane == "PRIORITY" else order_key


def next_fifo_key() -> int:
    """The next key at the back of the FIFO queue."""
    if connection.vendor != "postgresql":
        # SQLite (the embedded mode) has no sequences.  Each of its write transactions holds
        # the database's one write lock from BEGIN (IMMEDIATE, config/settings/database.py), and
        # every caller is inside one: the largest key + 1 cannot be handed out twice.
        top = QueueEntry.objects.aggregate(top=Max("order_key"))["top"] or 0
        priority_top = QueueEntry.objects.filter(order_key__lt=0).aggregate(top=Max("order_key"))[
            "top"
        ]
        if priority_top is not None:
            top = max(top, priority_top + PRIORITY_OFFSET)
        return max(top, FIFO_BASE) + 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval('waitroom_queue_order_seq')")
        return FIFO_BASE + cursor.fetchone()[0]
