"""Queue entries and admissions carry their room's engine sale, so a Citus cluster can
distribute them by sale beside the sale's rows (kernel/sharding.py, docs/performance.md
"Beyond one primary").

Add the columns nullable, copy each room's sale, then make them NOT NULL; one place per
account and room leads with the sale (the same rule: a room is of one sale).  Backwards the
columns are dropped: they only repeated the room's sale."""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE {table} SET sale_id = (
    SELECT w.sale_id FROM waitroom_waitingroom w WHERE w.id = {table}.room_id
) WHERE sale_id IS NULL
"""
TABLES = {"queueentry": "waitroom_queueentry", "admission": "waitroom_admission"}


def sale_field(*, null: bool) -> models.ForeignKey:
    return models.ForeignKey(
        null=null,
        db_index=False,  # the room FK's index is still named waitroom_queueentry_sale_id_...
        on_delete=django.db.models.deletion.CASCADE,
        related_name="+",
        to="bookings.sale",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0017_denied_boarding"),
        ("waitroom", "0012_safety_net"),
    ]

    operations = [
        *[
            migrations.AddField(model_name=model, name="sale", field=sale_field(null=True))
            for model in TABLES
        ],
        *[
            migrations.RunSQL(FILL.format(table=table), reverse_sql=migrations.RunSQL.noop)
            for table in TABLES.values()
        ],
        *[
            migrations.AlterField(model_name=model, name="sale", field=sale_field(null=False))
            for model in TABLES
        ],
        migrations.RemoveConstraint(model_name="queueentry", name="queue_entry_one_per_customer"),
        migrations.AddConstraint(
            model_name="queueentry",
            constraint=models.UniqueConstraint(
                fields=("sale", "room", "customer"), name="queue_entry_one_per_customer"
            ),
        ),
    ]
