"""E-mails (the mail outbox) carry their booking's sale, so a Citus cluster can distribute
them by sale beside their booking and their event (kernel/sharding.py).

Add the column nullable, copy each booking's sale, make it NOT NULL; "one e-mail per event
and kind" becomes (sale, event, kind), the same rule (an event is of one sale).  Backwards
the column is dropped: it only repeated the booking's sale."""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE bookings_notification SET sale_id = (
    SELECT b.sale_id FROM bookings_booking b WHERE b.id = bookings_notification.booking_id
) WHERE sale_id IS NULL
"""


def sale_key(**kwargs):
    return models.ForeignKey(
        on_delete=django.db.models.deletion.PROTECT,
        related_name="+",
        to="bookings.sale",
        **kwargs,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0020_resale"),
    ]

    operations = [
        migrations.AddField(model_name="notification", name="sale", field=sale_key(null=True)),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(model_name="notification", name="sale", field=sale_key()),
        migrations.RemoveConstraint(model_name="notification", name="notification_once_per_event"),
        migrations.AddConstraint(
            model_name="notification",
            constraint=models.UniqueConstraint(
                condition=models.Q(("event__isnull", False)),
                fields=("sale", "event", "kind"),
                name="notification_once_per_event",
            ),
        ),
    ]
