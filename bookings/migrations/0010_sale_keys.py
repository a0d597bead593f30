"""The engine's keys point at the sale (issue 14), step 3 of 3.

Every `flight` key of the engine (seats, inventory classes, bookings, tickets) is re-pointed
at `bookings.Sale` and renamed `sale`.  flights 0004 gave each flight a sale with the same
id, so no value changes: only the foreign-key constraints and the column names do.  The
moved tables get the engine's names.
"""

import django.db.models.deletion
from django.db import migrations, models


def sale_key(related_name, on_delete):
    return models.ForeignKey(
        on_delete=on_delete, related_name=related_name, to="bookings.sale"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0009_sale_and_engine_inventory"),
        ("flights", "0005_flight_sale_required"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="inventory", name="inventory_flight_class_uniq"),
        migrations.RemoveConstraint(model_name="seat", name="seat_flight_seat_no_uniq"),
        migrations.AlterField(
            model_name="inventory",
            name="flight",
            field=sale_key("inventories", django.db.models.deletion.CASCADE),
        ),
        migrations.AlterField(
            model_name="seat",
            name="flight",
            field=sale_key("seats", django.db.models.deletion.CASCADE),
        ),
        migrations.AlterField(
            model_name="booking",
            name="flight",
            field=sale_key("bookings", django.db.models.deletion.PROTECT),
        ),
        migrations.AlterField(
            model_name="ticket",
            name="flight",
            field=sale_key("tickets", django.db.models.deletion.PROTECT),
        ),
        migrations.RenameField(model_name="inventory", old_name="flight", new_name="sale"),
        migrations.RenameField(model_name="seat", old_name="flight", new_name="sale"),
        migrations.RenameField(model_name="booking", old_name="flight", new_name="sale"),
        migrations.RenameField(model_name="ticket", old_name="flight", new_name="sale"),
        migrations.AlterModelTable(name="inventory", table=None),
        migrations.AlterModelTable(name="seat", table=None),
        migrations.AddConstraint(
            model_name="inventory",
            constraint=models.UniqueConstraint(
                fields=("sale", "fare_class"), name="inventory_sale_class_uniq"
            ),
        ),
        migrations.AddConstraint(
            model_name="seat",
            constraint=models.UniqueConstraint(
                fields=("sale", "seat_no"), name="seat_sale_seat_no_uniq"
            ),
        ),
    ]
