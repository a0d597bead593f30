"""Passengers carry their booking's sale, so a Citus cluster can distribute them by sale
beside their booking (kernel/sharding.py, docs/performance.md "Beyond one primary").

Add the column nullable, copy each booking's sale, then make it NOT NULL; the one-live-
booking-per-seat index leads with the sale (the same rule: a seat is of one sale).  Backwards
the column is dropped: it only ever repeated the booking's sale."""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE bookings_passenger SET sale_id = (
    SELECT b.sale_id FROM bookings_booking b WHERE b.id = bookings_passenger.booking_id
) WHERE sale_id IS NULL
"""


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0017_denied_boarding"),
    ]

    operations = [
        migrations.AddField(
            model_name="passenger",
            name="sale",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="bookings.sale",
            ),
        ),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="passenger",
            name="sale",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="bookings.sale",
            ),
        ),
        migrations.RemoveConstraint(
            model_name="passenger", name="passenger_one_live_booking_per_seat"
        ),
        migrations.AddConstraint(
            model_name="passenger",
            constraint=models.UniqueConstraint(
                condition=models.Q(("is_live", True), ("seat__isnull", False)),
                fields=("sale", "seat"),
                name="passenger_one_live_booking_per_seat",
            ),
        ),
    ]
