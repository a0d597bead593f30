import django.core.serializers.json
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """The outbox, its receipts and the idempotency records, moved from `bookings`.

    State only: the tables were created by bookings' migrations and keep their names
    (`db_table`); bookings/0008_move_outbox_to_kernel removes them from bookings' state.  On a
    fresh database this may run before those tables exist, which is fine: nothing here
    touches the database."""

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    state_operations = [
        migrations.CreateModel(
            name="OutboxEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("aggregate_type", models.CharField(max_length=40)),
                ("aggregate_id", models.CharField(max_length=40)),
                ("event_type", models.CharField(max_length=60)),
                ("payload", models.JSONField(default=dict)),
                ("created_at", models.DateTimeField()),
                ("published_at", models.DateTimeField(blank=True, null=True)),
                ("attempts", models.PositiveIntegerField(default=0)),
                ("next_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("last_error", models.TextField(blank=True)),
            ],
            options={
                "db_table": "bookings_outboxevent",
                "ordering": ["id"],
                "indexes": [
                    models.Index(
                        condition=models.Q(("published_at__isnull", True)),
                        fields=["id"],
                        name="outbox_unpublished_idx",
                    ),
                    models.Index(
                        fields=["aggregate_type", "aggregate_id", "id"],
                        name="bookings_ou_aggrega_40a232_idx",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="ProcessedEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("consumer", models.CharField(max_length=80)),
                ("processed_at", models.DateTimeField()),
                (
                    "event",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="receipts",
                        to="kernel.outboxevent",
                    ),
                ),
            ],
            options={
                "db_table": "bookings_processedevent",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("consumer", "event"), name="processed_event_once"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="IdempotencyRecord",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "scope",
                    models.CharField(
                        help_text='What the key was used for, e.g. "hold".', max_length=32
                    ),
                ),
                ("key", models.CharField(max_length=255)),
                ("request_fingerprint", models.CharField(max_length=64)),
                ("response_status", models.PositiveSmallIntegerField()),
                (
                    "response_body",
                    models.JSONField(encoder=django.core.serializers.json.DjangoJSONEncoder),
                ),
                ("resource_type", models.CharField(blank=True, max_length=100)),
                ("resource_id", models.CharField(blank=True, max_length=40)),
                ("created_at", models.DateTimeField()),
                (
                    "customer",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "db_table": "bookings_idempotencyrecord",
                "indexes": [
                    models.Index(fields=["created_at"], name="bookings_id_created_3f75c5_idx")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("customer", "scope", "key"),
                        name="idempotency_key_per_customer_scope",
                    )
                ],
            },
        ),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=state_operations)]
