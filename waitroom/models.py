import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from bookings import catalogue


def new_shuffle_seed() -> str:
    return secrets.token_hex(32)


class AdmissionMode(models.TextChoices):
    """How the admission rate is set: by staff, or by the origin's health between a floor
    and a ceiling staff set (waitroom/origin_health.py)."""

    FIXED = "FIXED", _("Fixed rate")
    ADAPTIVE = "ADAPTIVE", _("Follows the origin's health")


class WaitingRoom(models.Model):
    """The waiting room in front of one engine sale (a flight's, an event's): nobody holds a
    unit of that sale without an admission token.  What the sale sells is its catalogue's
    to say (`bookings.catalogue`); the room knows only the engine's sale.

    The shuffle seed is drawn when the room is created; its SHA-256 (`seed_commitment`) is
    shown before the on-sale time and the seed itself after the shuffle, so anyone can check
    the pre-queue order was not chosen after the fact (docs/architecture.md, "Waiting room").
    """

    sale = models.ForeignKey(
        "bookings.Sale",
        on_delete=models.CASCADE,
        related_name="waiting_rooms",
        help_text="The engine's sale behind the waiting room: holds on it need admission.",
    )
    opens_at = models.DateTimeField(help_text="The on-sale time: the pre-queue is shuffled then.")
    admit_per_minute = models.PositiveIntegerField(
        help_text="Admission rate, people per minute (in adaptive mode: the rate now)."
    )
    admission_mode = models.CharField(
        max_length=10, choices=AdmissionMode.choices, default=AdmissionMode.FIXED
    )
    adaptive_floor_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Adaptive mode: never admit slower than this."
    )
    adaptive_ceiling_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Adaptive mode: never admit faster than this."
    )
    adaptive_target_hold_ms = models.PositiveIntegerField(
        default=300,
        help_text="Adaptive mode: holds slower than this on average mean the origin struggles.",
    )
    adaptive_adjusted_at = models.DateTimeField(null=True, blank=True, editable=False)
    max_inside = models.PositiveIntegerField(help_text="Most shoppers inside at once.")
    stay_seconds = models.PositiveIntegerField(
        default=600, help_text="How long an admitted shopper may stay (token lifetime)."
    )
    paused = models.BooleanField(default=False)
    require_verified_email = models.BooleanField(
        default=False,
        help_text=(
            "Only accounts with a verified e-mail address may join the queue (against "
            "sign-up farms). Set it before the sale opens: places taken earlier are kept."
        ),
    )
    require_proof_of_work = models.BooleanField(
        default=False,
        help_text=(
            "Joining needs a proof-of-work solved by the page's script (scrypt, memory-hard), "
            "harder for addresses that already hold many places and for new, unverified "
            "accounts (docs/security.md, 'Proof-of-work')."
        ),
    )
    safety_net = models.BooleanField(
        default=False,
        help_text=(
            "Safety-net mode: the room stays dormant (shoppers pass straight through) until "
            "hold attempts per second or shoppers holding pass a threshold below, then "
            "queues everyone new; it goes dormant again once nobody waits."
        ),
    )
    safety_net_holds_per_second = models.PositiveIntegerField(
        null=True, blank=True, help_text="Switch on at this many hold attempts in a second."
    )
    safety_net_shoppers = models.PositiveIntegerField(
        null=True, blank=True, help_text="Switch on at this many shoppers holding at once."
    )
    safety_net_calm_seconds = models.PositiveIntegerField(
        default=60, help_text="Stay on at least this long, and until nobody waits."
    )
    safety_net_on_since = models.DateTimeField(null=True, blank=True, editable=False)
    seed = models.CharField(max_length=64, default=new_shuffle_seed, editable=False)
    shuffled_at = models.DateTimeField(null=True, blank=True, editable=False)
    shuffled_count = models.PositiveIntegerField(default=0, editable=False)
    admission_clock = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="Rate limiter state: admissions are paid for up to this instant.",
    )
    priority_share = models.PositiveSmallIntegerField(
        default=100,
        help_text=(
            "Share of the admission rate (percent) for the presale-code lane: 100 admits "
            "code holders first; less keeps that share for them while both lanes wait."
        ),
    )
    priority_credit = models.FloatField(
        default=0,
        editable=False,
        help_text="The priority lane's admissions owed by its share (0..1 carried over).",
    )
    sold_out_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text=(
            "When every unit was sold (none left, none held): the queue takes no new joins "
            "from then on; those in it keep their place and may join the waitlist. Cleared "
            "if units come back and are not all taken by the waitlist."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-opens_at"]
        permissions = [("pause_waitingroom", "Can pause and resume admission")]
        # The constraints keep the names they were created with (a rename buys nothing and
        # SQLite, the embedded mode, cannot rename a constraint in place).
        constraints = [
            models.UniqueConstraint(fields=["sale"], name="protected_sale_one_per_sale"),
            models.CheckConstraint(
                condition=Q(admit_per_minute__gte=1), name="protected_sale_rate_positive"
            ),
            models.CheckConstraint(
                condition=Q(max_inside__gte=1), name="protected_sale_max_inside_positive"
            ),
            models.CheckConstraint(
                condition=Q(stay_seconds__gte=30), name="protected_sale_stay_at_least_30s"
            ),
            models.CheckConstraint(
                condition=Q(priority_share__lte=100), name="waiting_room_priority_share_percent"
            ),
            # Adaptive mode needs its bounds, 1 <= floor <= ceiling.
            models.CheckConstraint(
                condition=~Q(admission_mode="ADAPTIVE")
                | (
                    Q(adaptive_floor_per_minute__gte=1)
                    & Q(adaptive_ceiling_per_minute__gte=F("adaptive_floor_per_minute"))
                ),
                name="waiting_room_adaptive_bounds",
                violation_error_message=_(
                    "Adaptive admission needs a floor of at least 1 and a ceiling no lower "
                    "than the floor."
                ),
            ),
        ]

    def __str__(self) -> str:
        # Named by what its sale sells ("flight VN213", "Hamlet"), in the catalogue's words.
        return f"Waiting room {self.pk} for {catalogue.describe(self.sale).title}"

    @property
    def kind(self) -> str:
        """What the room's sale sells (`bookings.models.SaleKind`): the sale's own kind."""
        return self.sale.kind

    @property
    def seed_commitment(self) -> str:
        return hashlib.sha256(self.seed.encode()).hexdigest()

    @property
    def seed_published(self) -> str | None:
        return self.seed if self.shuffled_at else None


class StockState(models.TextChoices):
    """What the queue page says about the units: some left; none left but some only held
    (holds lapse, so they may come back); none left and none held (all sold)."""

    AVAILABLE = "AVAILABLE", _("Units left")
    ALL_HELD = "ALL_HELD", _("All held for now: holds may lapse")
    SOLD_OUT = "SOLD_OUT", _("Sold out")


class QueueStatus(models.TextChoices):
    WAITING = "WAITING", "Waiting"
    ADMITTED = "ADMITTED", "Admitted"


class Lane(models.TextChoices):
    GENERAL = "GENERAL", _("General")
    PRIORITY = "PRIORITY", _("Presale code")


class QueueEntry(models.Model):
    """One customer's place in one waiting room's queue (at most one row per account and room).

    PostgreSQL is the record of who joined and in which order (`order_key`: 1..n for the
    shuffled pre-queue, FIFO_BASE + a sequence number afterwards, NULL while in the
    pre-queue); the Redis sorted set is the fast index over the WAITING rows and is rebuilt
    from here whenever it is missing.
    """

    room = models.ForeignKey(WaitingRoom, on_delete=models.CASCADE, related_name="entries")
    # The room's engine sale, copied so a Citus cluster can put the row beside the sale's
    # (kernel/sharding.py); written with the row, never changed.  No index of its own: rows
    # are read by room, and the room FK's index still bears the old `sale_id` name.
    sale = models.ForeignKey(
        "bookings.Sale", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="queue_entries"
    )
    status = models.CharField(
        max_length=10, choices=QueueStatus.choices, default=QueueStatus.WAITING
    )
    order_key = models.BigIntegerField(null=True, blank=True)
    lane = models.CharField(max_length=10, choices=Lane.choices, default=Lane.GENERAL)
    joined_at = models.DateTimeField()
    joined_from = models.GenericIPAddressField(null=True, blank=True)
    # The joining address's /24 (IPv4) or /64 (IPv6): what the proof-of-work's difficulty
    # counts places by (kernel.web.client_ip.address_prefix).
    joined_prefix = models.CharField(max_length=50, blank=True, default="")
    admitted_at = models.DateTimeField(null=True, blank=True)
    admission_expires_at = models.DateTimeField(null=True, blank=True)
    # When the queue page first said this place would be let in (join time + the ETA given),
    # for the staff panel's "ETA given against the ETA that came true".
    eta_promised_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["room_id", "order_key", "id"]
        verbose_name_plural = "queue entries"
        indexes = [
            models.Index(fields=["room", "status", "order_key"], name="queue_entry_order_idx"),
            models.Index(fields=["room", "joined_prefix"], name="queue_entry_prefix_idx"),
        ]
        constraints = [
            # Sale first for Citus (kernel/sharding.py); a room is of one sale, so the rule
            # is the same.
            models.UniqueConstraint(
                fields=["sale", "room", "customer"], name="queue_entry_one_per_customer"
            ),
            models.CheckConstraint(
                condition=~Q(status="ADMITTED")
                | (Q(admitted_at__isnull=False) & Q(admission_expires_at__isnull=False)),
                name="queue_entry_admission_has_times",
            ),
            # The priority lane's keys sort before every general key (order_keys.py).
            models.CheckConstraint(
                condition=Q(order_key__isnull=True)
                | (Q(lane="PRIORITY") & Q(order_key__lt=0))
                | (Q(lane="GENERAL") & Q(order_key__gt=0)),
                name="queue_entry_key_in_its_lane",
            ),
        ]

    def __str__(self) -> str:
        return f"Queue entry {self.pk} room {self.room_id} customer {self.customer_id}"


class Admission(models.Model):
    """Audit record, insert-only: who was let in, when, until when, and from which place."""

    room = models.ForeignKey(WaitingRoom, on_delete=models.CASCADE, related_name="admissions")
    # The room's engine sale, copied so a Citus cluster can put the row beside the sale's
    # (kernel/sharding.py); written with the row, never changed.  No index of its own: rows
    # are read by room, and the room FK's index still bears the old `sale_id` name.
    sale = models.ForeignKey(
        "bookings.Sale", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    entry = models.ForeignKey(QueueEntry, on_delete=models.CASCADE, related_name="admissions")
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="admissions"
    )
    order_key = models.BigIntegerField()
    admitted_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["room_id", "admitted_at", "id"]
        indexes = [models.Index(fields=["room", "admitted_at"], name="admission_sale_time_idx")]
        constraints = [
            models.CheckConstraint(
                condition=Q(expires_at__gt=F("admitted_at")), name="admission_expires_after"
            ),
        ]

    def __str__(self) -> str:
        return f"Admission {self.pk} room {self.room_id} customer {self.customer_id}"


def new_presale_code() -> str:
    # 12 characters of an unambiguous alphabet: easy to type from an e-mail, 59 bits.
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(12))


class PresaleCode(models.Model):
    """A code staff issue for one room: whoever redeems it queues in the priority lane.
    Single-use (`uses_allowed` = 1) or counted; each use binds the code to one account
    (`PresaleRedemption`), so a code passed on after use is worth nothing."""

    room = models.ForeignKey(WaitingRoom, on_delete=models.CASCADE, related_name="presale_codes")
    # The room's engine sale, copied so a Citus cluster can put the row beside the sale's
    # (kernel/sharding.py); written with the row, never changed.  Read by (sale, room, code).
    sale = models.ForeignKey(
        "bookings.Sale", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    code = models.CharField(max_length=32, default=new_presale_code)
    uses_allowed = models.PositiveIntegerField(default=1, help_text="1: single-use.")
    uses = models.PositiveIntegerField(default=0, editable=False)
    note = models.CharField(max_length=200, blank=True, help_text="For whom (staff only).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["room_id", "id"]
        constraints = [
            # Sale first for Citus; a room is of one sale, so the rule is the same.
            models.UniqueConstraint(
                fields=["sale", "room", "code"], name="presale_code_unique_in_room"
            ),
            models.CheckConstraint(
                condition=Q(uses_allowed__gte=1), name="presale_code_allows_a_use"
            ),
            models.CheckConstraint(
                condition=Q(uses__lte=F("uses_allowed")), name="presale_code_uses_within_allowed"
            ),
        ]

    def __str__(self) -> str:
        return f"Presale code {self.code} ({self.uses}/{self.uses_allowed}) room {self.room_id}"


class PresaleRedemption(models.Model):
    """One account's use of a presale code: at most one per account and room."""

    room = models.ForeignKey(WaitingRoom, on_delete=models.CASCADE, related_name="redemptions")
    # The room's (and the code's) engine sale, copied as on the code: see above.
    sale = models.ForeignKey(
        "bookings.Sale", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    code = models.ForeignKey(PresaleCode, on_delete=models.CASCADE, related_name="redemptions")
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="presale_redemptions"
    )
    redeemed_at = models.DateTimeField()

    class Meta:
        ordering = ["room_id", "redeemed_at", "id"]
        constraints = [
            # Sale first for Citus; a room is of one sale, so the rule is the same.
            models.UniqueConstraint(
                fields=["sale", "room", "customer"], name="presale_redemption_one_per_account"
            ),
        ]

    def __str__(self) -> str:
        return f"Presale redemption {self.pk} code {self.code_id} customer {self.customer_id}"


class RoomChangeKind(models.TextChoices):
    PAUSE = "PAUSE", _("Paused admission")
    RESUME = "RESUME", _("Resumed admission")
    RATE = "RATE", _("Changed the admission rate")


class RoomChange(models.Model):
    """Audit record, insert-only: who changed a room's admission from the live panel, when,
    and the settings before and after."""

    room = models.ForeignKey(WaitingRoom, on_delete=models.CASCADE, related_name="changes")
    # The room's engine sale, copied so the audit sits beside the sale's rows on a cluster
    # distributed by sale (kernel/sharding.py).  Read by room only: no index of its own.
    sale = models.ForeignKey(
        "bookings.Sale", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="room_changes"
    )
    changed_at = models.DateTimeField()
    kind = models.CharField(max_length=10, choices=RoomChangeKind.choices)
    before = models.JSONField()
    after = models.JSONField()

    class Meta:
        ordering = ["room_id", "-changed_at", "-id"]
        indexes = [models.Index(fields=["room", "-changed_at"], name="room_change_time_idx")]

    def __str__(self) -> str:
        return f"Room change {self.pk} room {self.room_id} {self.kind} by {self.changed_by_id}"
