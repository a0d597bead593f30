"""Presale codes and their redemptions carry their room's engine sale, as queue entries do
(0013), so a Citus cluster can distribute them by sale beside the sale's rows
(kernel/sharding.py, docs/performance.md "Beyond one primary"); with them the room needs no
single-column key for their foreign keys any more.

Add the columns nullable, copy each room's sale, then make them NOT NULL; a code's
uniqueness in its room and one redemption per account and room lead with the sale (the same
rules: a room is of one sale).  Backwards the columns are dropped: they only repeated the
room's sale."""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE {table} SET sale_id = (
    SELECT w.sale_id FROM waitroom_waitingroom w WHERE w.id = {table}.room_id
) WHERE sale_id IS NULL
"""
TABLES = {"presalecode": "waitroom_presalecode", "presaleredemption": "waitroom_presaleredemption"}
UNIQUE = {
    "presalecode": ("presale_code_unique_in_room", ("room", "code")),
    "presaleredemption": ("presale_redemption_one_per_account", ("room", "customer")),
}


def sale_field(*, null: bool) -> models.ForeignKey:
    return models.ForeignKey(
        null=null,
        db_index=False,
        on_delete=django.db.models.deletion.CASCADE,
        related_name="+",
        to="bookings.sale",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0017_denied_boarding"),
        ("waitroom", "0015_live_panel"),
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
        *[
            operation
            for model, (name, fields) in UNIQUE.items()
            for operation in (
                migrations.RemoveConstraint(model_name=model, name=name),
                migrations.AddConstraint(
                    model_name=model,
                    constraint=models.UniqueConstraint(fields=("sale", *fields), name=name),
                ),
            )
        ],
    ]
