"""The kernel's tables: the transactional outbox with its consumers' receipts, and the
idempotency records of retried writes.

They were born in `bookings` and keep the table names they had there (`db_table`), so moving
them here copied no row (bookings/migrations/0008_move_outbox_to_kernel.py)."""

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import Q


class OutboxEvent(models.Model):
    """An event written in the same transaction as the change it announces.

    The relay publishes it after commit, at least once; consumers are idempotent.
    """

    # The engine sale the event is of (every event is a booking's): the row lives beside that
    # sale's rows on a cluster distributed by sale (kernel/sharding.py).  A plain column, not
    # a foreign key: the kernel knows no app's models.  Written by `emit_event(s)`.
    sale_id = models.BigIntegerField()
    aggregate_type = models.CharField(max_length=40)
    aggregate_id = models.CharField(max_length=40)
    event_type = models.CharField(max_length=60)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    published_at = models.DateTimeField(null=True, blank=True)
    # Delivery bookkeeping: a consumer that fails is retried with back-off; after
    # OUTBOX_MAX_ATTEMPTS the event is left for an operator (and blocks its booking's later
    # events, since their order matters more than their speed).
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    # When the event-log relay had the log's acknowledgement for this event (docs/event-log.md).
    # Separate from `published_at`: our own consumers and the log are two readers at their
    # own pace, and one being down never holds the other back.
    logged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "bookings_outboxevent"
        ordering = ["id"]
        indexes = [
            models.Index(
                fields=["id"], condition=Q(published_at__isnull=True), name="outbox_unpublished_idx"
            ),
            models.Index(
                fields=["id"], condition=Q(logged_at__isnull=True), name="outbox_unlogged_idx"
            ),
            models.Index(fields=["aggregate_type", "aggregate_id", "id"]),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.aggregate_type}:{self.aggregate_id}"


class ProcessedEvent(models.Model):
    """A consumer's receipt for an outbox event, written in the transaction of its effect.

    Delivery is at least once; the unique (consumer, event) pair turns it into exactly once.
    """

    sale_id = models.BigIntegerField()  # its event's sale, so the receipt sits beside it
    consumer = models.CharField(max_length=80)
    event = models.ForeignKey(OutboxEvent, on_delete=models.CASCADE, related_name="receipts")
    processed_at = models.DateTimeField()

    class Meta:
        db_table = "bookings_processedevent"
        constraints = [
            # The same rule as (consumer, event): an event is of one sale.
            models.UniqueConstraint(
                fields=["sale_id", "consumer", "event"], name="processed_event_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.consumer} processed event {self.event_id}"


class RelayLease(models.Model):
    """Which process may run a singleton relay (the event log's) until `expires_at`.

    Taken and renewed by a conditional update on the database's clock, so it needs no session
    state (PgBouncer in transaction mode) and a dead holder loses it when it expires."""

    name = models.CharField(max_length=40, primary_key=True)
    holder = models.CharField(max_length=120)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} held by {self.holder} until {self.expires_at:%H:%M:%S}"


class IdempotencyRecord(models.Model):
    """A write that a client may retry: its key, what it asked for, and the answer it got.

    Written in the same transaction as the write itself, so "the hold exists" and "a retry
    with this key gets this hold back" are one fact.  Payments keep the same record on the
    payment row (the key must be committed before the gateway call); both follow the rules
    in `kernel.idempotency`.  What the write made is named by `resource_type` (a model label,
    e.g. "bookings.booking") and `resource_id`: the kernel knows no app's models."""

    # The sale the write was for, named by the request before the transaction: the record is
    # that sale's row (written in the hold's transaction), and a key is one per sale.
    sale_id = models.BigIntegerField()
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    scope = models.CharField(max_length=32, help_text='What the key was used for, e.g. "hold".')
    key = models.CharField(max_length=255)
    request_fingerprint = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField()
    response_body = models.JSONField(encoder=DjangoJSONEncoder)
    resource_type = models.CharField(max_length=100, blank=True)
    resource_id = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        db_table = "bookings_idempotencyrecord"
        constraints = [
            models.UniqueConstraint(
                fields=["sale_id", "customer", "scope", "key"],
                name="idempotency_key_per_customer_scope",
            ),
        ]
        indexes = [models.Index(fields=["created_at"])]

    def __str__(self) -> str:
        return f"{self.scope} {self.key} ({self.response_status})"
