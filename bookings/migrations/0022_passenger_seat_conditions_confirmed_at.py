"""Passengers record when the customer confirmed the conditions of their seat (a flight's
exit row), so the confirmation can be given at the hold, when naming the passengers or at
online check-in, and check-in refuses an exit-row passenger without it (issue 31).  Nullable:
existing passengers have not confirmed anything (online check-in asks them)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0021_notification_sale"),
    ]

    operations = [
        migrations.AddField(
            model_name="passenger",
            name="seat_conditions_confirmed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
