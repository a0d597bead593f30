"""Order keys of queue entries: 1..n for the shuffled pre-queue, FIFO_BASE + a sequence
number for everyone who joins after the shuffle (docs/architecture.md, "Waiting room")."""

from __future__ import annotations

from django.db import connection
from django.db.models import Max

from waitroom.models import QueueEntry

FIFO_BASE = 10**12


def next_fifo_key() -> int:
    """The next key at the back of the FIFO queue."""
    if connection.vendor != "postgresql":
        # SQLite (the embedded mode) has no sequences.  Each of its write transactions holds
        # the database's one write lock from BEGIN (IMMEDIATE, config/settings.py), and every
        # caller is inside one: the largest key + 1 cannot be handed out twice.
        top = QueueEntry.objects.aggregate(top=Max("order_key"))["top"] or 0
        return max(top, FIFO_BASE) + 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval('waitroom_queue_order_seq')")
        return FIFO_BASE + cursor.fetchone()[0]
