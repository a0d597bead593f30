"""Every flight owns a sale of the engine (issue 14), step 2 of 3.

The seat and fare-inventory models now belong to the engine (bookings 0009 took them over in
the migration state; their tables and rows are untouched).  Flights keep proxies of them for
the staff admin.  Each existing flight gets one Sale with **the same id**, so bookings 0010
can re-point every `flight` key at the sale without rewriting a single value: live holds,
confirmed bookings, tickets and counters survive as they are.
"""

import django.db.models.deletion
from django.core.management.color import no_style
from django.db import migrations, models
from django.utils import timezone


def give_every_flight_its_sale(apps, schema_editor):
    Flight = apps.get_model("flights", "Flight")
    Sale = apps.get_model("bookings", "Sale")
    db = schema_editor.connection.alias
    now = timezone.now()
    flight_ids = list(Flight.objects.using(db).order_by("id").values_list("id", flat=True))
    Sale.objects.using(db).bulk_create(
        [Sale(id=flight_id, kind="FLIGHT", created_at=now) for flight_id in flight_ids],
        batch_size=1000,
    )
    Flight.objects.using(db).update(sale_id=models.F("id"))
    # The sales were given explicit ids: move the id sequence past them (PostgreSQL; SQLite
    # needs nothing).
    connection = schema_editor.connection
    statements = connection.ops.sequence_reset_sql(no_style(), [Sale])
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def forget_the_sales(apps, schema_editor):
    Flight = apps.get_model("flights", "Flight")
    Sale = apps.get_model("bookings", "Sale")
    db = schema_editor.connection.alias
    Flight.objects.using(db).update(sale=None)
    Sale.objects.using(db).filter(kind="FLIGHT").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("flights", "0003_flight_gate_exit_rows"),
        ("bookings", "0009_sale_and_engine_inventory"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="Seat"),
                migrations.DeleteModel(name="FareInventory"),
            ],
        ),
        migrations.CreateModel(
            name="FareInventory",
            fields=[],
            options={
                "verbose_name": "fare inventory",
                "verbose_name_plural": "fare inventories",
                "proxy": True,
                "indexes": [],
                "constraints": [],
            },
            bases=("bookings.inventory",),
        ),
        migrations.CreateModel(
            name="Seat",
            fields=[],
            options={"proxy": True, "indexes": [], "constraints": []},
            bases=("bookings.seat",),
        ),
        migrations.AddField(
            model_name="flight",
            name="sale",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="flight",
                to="bookings.sale",
            ),
        ),
        migrations.RunPython(give_every_flight_its_sale, forget_the_sales),
    ]
