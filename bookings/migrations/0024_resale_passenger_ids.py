"""Partial resale (issue 29, item 4): a listing names the passengers (one ticket each) it
offers; the listings made before named the whole booking, so they get all its passengers."""

from django.db import migrations, models


def list_whole_bookings(apps, schema_editor):
    Resale = apps.get_model("bookings", "Resale")
    Passenger = apps.get_model("bookings", "Passenger")
    for resale in Resale.objects.filter(passenger_ids=[]).iterator():
        live = resale.status != "SOLD"  # a sold booking's passengers were let go with it
        passengers = Passenger.objects.filter(booking_id=resale.booking_id)
        if live:
            passengers = passengers.filter(is_live=True)
        resale.passenger_ids = list(passengers.order_by("id").values_list("id", flat=True))
        resale.save(update_fields=["passenger_ids"])


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0023_gate_rows_sale"),
    ]

    operations = [
        migrations.AddField(
            model_name="resale",
            name="passenger_ids",
            field=models.JSONField(
                default=list,
                help_text="The seller's passengers (one ticket each) listed; their seats go to the buyer.",
            ),
        ),
        migrations.AlterField(
            model_name="resale",
            name="face_value",
            field=models.DecimalField(
                decimal_places=2,
                help_text="What the listed tickets cost the seller.",
                max_digits=12,
            ),
        ),
        migrations.RemoveConstraint(model_name="resale", name="resale_sold_once"),
        migrations.RunPython(list_whole_bookings, migrations.RunPython.noop),
    ]
