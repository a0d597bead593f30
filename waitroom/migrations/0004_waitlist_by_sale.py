"""Waitlist entries wait on a sale of the engine, not on a flight (issue 14).

flights 0004 gave every flight a sale with the same id, so the key keeps its values; only the
foreign-key constraint and the column name change."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("waitroom", "0003_waiting_room"),
        ("flights", "0005_flight_sale_required"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="waitlistentry", name="waitlist_waiting_order_idx"),
        migrations.RemoveConstraint(
            model_name="waitlistentry", name="waitlist_one_active_entry_per_customer"
        ),
        migrations.AlterField(
            model_name="waitlistentry",
            name="flight",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="waitlist",
                to="bookings.sale",
            ),
        ),
        migrations.RenameField(model_name="waitlistentry", old_name="flight", new_name="sale"),
        migrations.AddIndex(
            model_name="waitlistentry",
            index=models.Index(
                condition=models.Q(status="WAITING"),
                fields=["sale", "fare_class", "id"],
                name="waitlist_waiting_order_idx",
            ),
        ),
        migrations.AddConstraint(
            model_name="waitlistentry",
            constraint=models.UniqueConstraint(
                condition=models.Q(status__in=["WAITING", "OFFERED"]),
                fields=("sale", "fare_class", "customer"),
                name="waitlist_one_active_entry_per_customer",
            ),
        ),
    ]
