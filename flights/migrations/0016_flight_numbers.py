"""A flight number once per departure moves from flights_flight's unique to a small global
table claimed before the flight's sale is written (flights.flight_numbers), so a Citus
cluster distributed by sale keeps the rule without a unique across sales
(kernel/sharding.py, docs/performance.md "Beyond one primary").

Forwards every flight's number is claimed (the rule held, so each is once), then the unique
on flights_flight goes.  Backwards the unique returns first (claims kept it, so the flights'
numbers are still once each), then the table goes."""

from django.db import migrations, models

CLAIM_EVERY_FLIGHT = """
INSERT INTO flights_flightnumber (code, departure_at, claimed_at)
SELECT code, departure_at, CURRENT_TIMESTAMP FROM flights_flight
"""


class Migration(migrations.Migration):
    dependencies = [
        ("flights", "0015_carry_exit_row_confirmations"),
    ]

    operations = [
        migrations.CreateModel(
            name="FlightNumber",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("code", models.CharField(max_length=10)),
                ("departure_at", models.DateTimeField()),
                ("claimed_at", models.DateTimeField()),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("code", "departure_at"), name="flight_number_once_per_departure"
                    )
                ],
            },
        ),
        migrations.RunSQL(CLAIM_EVERY_FLIGHT, reverse_sql=migrations.RunSQL.noop),
        migrations.RemoveConstraint(model_name="flight", name="flight_code_departure_uniq"),
    ]
