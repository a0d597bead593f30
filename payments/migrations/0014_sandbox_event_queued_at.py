"""The sandbox's events are their own delivery queue (payments.gateways.sandbox_delivery):
`queued_at` says an event's delivery task was published, and beat's relay publishes the
rest.  Every event already written had its delivery published when it was written (or never
will, with delivery off), so each counts as queued from its creation: none is sent again."""

from django.db import migrations, models

from kernel.schedules import install_schedules_operation


class Migration(migrations.Migration):
    dependencies = [
        ("payments", "0013_payment_key_per_sale"),
        ("bookings", "0004_install_schedules"),
    ]

    operations = [
        migrations.AddField(
            model_name="sandboxevent",
            name="queued_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunSQL(
            "UPDATE payments_sandboxevent SET queued_at = created_at", migrations.RunSQL.noop
        ),
        migrations.AddIndex(
            model_name="sandboxevent",
            index=models.Index(
                condition=models.Q(("queued_at__isnull", True)),
                fields=["created_at"],
                name="sandbox_event_unqueued_idx",
            ),
        ),
        install_schedules_operation(),
    ]
