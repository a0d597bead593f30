"""WaitlistEntry now belongs to the sale engine (bookings 0013 took it over, table and all):
forget it here, in Django's state only.  The table stays, owned by bookings."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0013_waitlist_joins_the_engine"),
        ("waitroom", "0007_protected_sale_by_sale"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="WaitlistEntry")],
        ),
    ]
