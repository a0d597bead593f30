"""The departure record per cabin carries the volunteers and the passengers denied boarding
(issue 28): the forecast counts them as shows."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("flights", "0012_denied_boarding"),
    ]

    operations = [
        migrations.AddField(
            model_name="cabindeparture",
            name="volunteers",
            field=models.PositiveIntegerField(
                default=0, help_text="Gave up their seat for compensation (Art. 4(1)): shows."
            ),
        ),
        migrations.AddField(
            model_name="cabindeparture",
            name="denied",
            field=models.PositiveIntegerField(
                default=0, help_text="Denied boarding against their will (Art. 4(3)): shows."
            ),
        ),
        migrations.AddConstraint(
            model_name="cabindeparture",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    no_shows__lte=models.F("sold") - models.F("volunteers") - models.F("denied")
                ),
                name="cabin_departure_taken_off_of_sold",
            ),
        ),
    ]
