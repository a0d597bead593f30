"""An index for the hold cap's count (one customer's live holds on one sale), which every
hold runs: docs/performance.md, "Issue 26: the hold cap's count read every live hold".
Built concurrently on PostgreSQL, so a live bookings table keeps taking holds meanwhile."""

from django.db import migrations, models

from kernel.migration_operations import AddIndexWithoutBlockingWrites


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("bookings", "0026_hold_units_rules_in_sql")]

    operations = [
        AddIndexWithoutBlockingWrites(
            model_name="booking",
            index=models.Index(
                condition=models.Q(("status", "HELD")),
                fields=["customer", "sale"],
                name="booking_held_customer_sale_idx",
            ),
        ),
    ]
