"""A waiting room guards an engine sale (issue 14): flights' rooms get their flight's sale."""

import django.db.models.deletion
from django.db import migrations, models


def fill_sales(apps, schema_editor):
    ProtectedSale = apps.get_model("waitroom", "ProtectedSale")
    Flight = apps.get_model("flights", "Flight")
    for room in ProtectedSale.objects.filter(sale__isnull=True).iterator():
        room.sale_id = Flight.objects.values_list("sale_id", flat=True).get(pk=room.flight_id)
        room.save(update_fields=["sale"])


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0012_venue_seat_fields"),
        ("flights", "0006_flight_id_is_its_sale_id"),
        ("waitroom", "0005_waitlist_class_code"),
    ]

    operations = [
        migrations.AddField(
            model_name="protectedsale",
            name="sale",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="protected_sales",
                to="bookings.sale",
            ),
        ),
        migrations.RunPython(fill_sales, migrations.RunPython.noop),
    ]
