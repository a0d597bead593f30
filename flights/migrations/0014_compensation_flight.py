"""Compensation entries carry their flight, so a Citus cluster can distribute them by
`flight_id` (= the flight's sale id) beside the flight's other day-of-departure rows
(kernel/sharding.py, docs/performance.md "Beyond one primary").

The key points at the flight's `sale_id` (unique, and equal to its id by the CHECK
`flight_id_is_its_sale_id`), so it already includes the distribution column.  Added nullable,
copied from the denied boarding's flight, then made NOT NULL.  "One entry per denied
boarding" is widened to (denied_boarding, flight) at the cut-over, the same rule
(kernel/citus_cutover.py, step 3).  Backwards the column is dropped: it only repeated the
denied boarding's flight."""

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
    ]
