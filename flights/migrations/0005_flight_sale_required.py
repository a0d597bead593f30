import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Separate from 0004: PostgreSQL refuses to alter a table with the data update's
    deferred foreign-key checks still pending in the same transaction."""

    dependencies = [("flights", "0004_flights_own_a_sale")]

    operations = [
        migrations.AlterField(
            model_name="flight",
            name="sale",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="flight",
                to="bookings.sale",
            ),
        ),
    ]
