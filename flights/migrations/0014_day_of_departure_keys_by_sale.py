"""The day of departure's rows key their flight by its sale id, and compensation entries
carry their flight, so a Citus cluster can distribute them all by `flight_id` (= the flight's
sale id) beside the flight's sale (kernel/sharding.py, docs/performance.md "Beyond one
primary").

Every key to the flight points at its `sale_id` (unique, and equal to its id by the CHECK
`flight_id_is_its_sale_id`, so no value changes), so it already includes the distribution
column on both sides.  A compensation's flight is added nullable, copied from its denied
boarding's flight, then made NOT NULL.  "One entry per denied boarding" is widened to
(denied_boarding, flight) at the cut-over, the same rule (kernel/citus_cutover.py, step 3).
Backwards the keys point at the flight's id again (the same values) and the compensation's
column is dropped: it only repeated the denied boarding's flight."""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE flights_compensation SET flight_id = (
    SELECT f.sale_id FROM flights_deniedboarding d JOIN flights_flight f ON f.id = d.flight_id
    WHERE d.id = flights_compensation.denied_boarding_id
) WHERE flight_id IS NULL
"""


def flight_key(**kwargs):
    return models.ForeignKey(
        on_delete=django.db.models.deletion.PROTECT,
        related_name="+",
        to="flights.flight",
        to_field="sale",
        **kwargs,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("flights", "0013_departure_taken_off_airport_local_names"),
    ]

    operations = [
        migrations.AddField(model_name="compensation", name="flight", field=flight_key(null=True)),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(model_name="compensation", name="flight", field=flight_key()),
        # The day of departure's rows key their flight by its sale id too (the same value).
        *(
            migrations.AlterField(
                model_name=model,
                name="flight",
                field=models.ForeignKey(
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name=related_name,
                    to="flights.flight",
                    to_field="sale",
                ),
            )
            for model, related_name in (
                ("cabindeparture", "cabin_departures"),
                ("deniedboarding", "denied_boardings"),
                ("noshow", "no_shows"),
                ("onlinecheckin", "online_checkins"),
                ("volunteeroffer", "+"),
            )
        ),
    ]
