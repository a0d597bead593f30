"""The outbox (OutboxEvent, ProcessedEvent) and IdempotencyRecord move to the `kernel` app.

No row is copied: the tables keep their names (the kernel models set `db_table`), and only
Django's idea of which app owns them changes (`SeparateDatabaseAndState`).  The one real
change is IdempotencyRecord's link to what the write made: the kernel cannot know bookings,
so the `booking` foreign key becomes a generic `resource_type`/`resource_id` pair, filled
from the old column before it is dropped (and back, when migrating backwards)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models.functions import Cast

BOOKING = "bookings.booking"


def booking_to_resource(apps, schema_editor):
    record = apps.get_model("bookings", "IdempotencyRecord")
    record.objects.filter(booking__isnull=False).update(
        resource_type=BOOKING, resource_id=Cast("booking_id", models.CharField())
    )


def resource_to_booking(apps, schema_editor):
    record = apps.get_model("bookings", "IdempotencyRecord")
    for pk, resource_id in record.objects.filter(resource_type=BOOKING).values_list(
        "pk", "resource_id"
    ):
        record.objects.filter(pk=pk).update(booking_id=int(resource_id))


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0007_idempotency_records_and_email_receipts"),
        ("kernel", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="idempotencyrecord",
            name="resource_type",
            field=models.CharField(blank=True, default="", max_length=100),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="idempotencyrecord",
            name="resource_id",
            field=models.CharField(blank=True, default="", max_length=40),
            preserve_default=False,
        ),
        migrations.RunPython(booking_to_resource, resource_to_booking),
        migrations.RemoveField(model_name="idempotencyrecord", name="booking"),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="notification",
                    name="event",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="kernel.outboxevent",
                    ),
                ),
                migrations.DeleteModel(name="ProcessedEvent"),
                migrations.DeleteModel(name="OutboxEvent"),
                migrations.DeleteModel(name="IdempotencyRecord"),
            ],
        ),
    ]
