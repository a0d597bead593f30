"""`ProtectedSale` becomes `WaitingRoom` (issue 25): same table rows, same ids.

The room knows only the engine's sale: its `flight` foreign key and its `kind` copy go (a
flight's room guards the flight's own sale, and a sale knows its kind).  Before they go,
every flight named is checked to be its room's sale's flight, so nothing is lost; backwards,
both are filled again from the sale.  Queue entries and admissions name their `room`, and
the permissions keep their holders under the new model's codenames.
"""

import django.db.models.deletion
from django.db import migrations, models

OLD, NEW = "protectedsale", "waitingroom"
PERMISSIONS = ("add", "change", "delete", "view", "pause")
PERMISSION_NAMES = {"protected sale": "waiting room"}


def check_flights_are_their_sales(apps, schema_editor):
    """The flight a room names must be its sale's flight (flight id = sale id), or
    dropping the column would lose what the room was for."""
    Room = apps.get_model("waitroom", "ProtectedSale")
    Flight = apps.get_model("flights", "Flight")
    sale_of_flight = dict(Flight.objects.values_list("pk", "sale_id"))
    wrong = [
        room_id
        for room_id, flight_id, sale_id in Room.objects.filter(flight__isnull=False).values_list(
            "pk", "flight_id", "sale_id"
        )
        if sale_of_flight.get(flight_id) != sale_id
    ]
    if wrong:
        raise RuntimeError(f"Waiting rooms {wrong} name a flight that is not their sale's.")


def refill_kind_and_flight(apps, schema_editor):
    """Backwards: the room's kind is its sale's; a flight's room names the sale's flight."""
    Room = apps.get_model("waitroom", "WaitingRoom")
    Sale = apps.get_model("bookings", "Sale")
    Flight = apps.get_model("flights", "Flight")
    kinds = dict(Sale.objects.values_list("pk", "kind"))
    flights = dict(Flight.objects.values_list("sale_id", "pk"))
    for room in Room.objects.all().iterator():
        room.kind = kinds[room.sale_id]
        room.flight_id = flights.get(room.sale_id) if room.kind == "FLIGHT" else None
        room.save(update_fields=["kind", "flight"])


def _rename_permissions(apps, old: str, new: str, names: dict[str, str]) -> None:
    Permission = apps.get_model("auth", "Permission")
    for action in PERMISSIONS:
        for permission in Permission.objects.filter(
            content_type__app_label="waitroom", codename=f"{action}_{old}"
        ):
            permission.codename = f"{action}_{new}"
            for before, after in names.items():
                permission.name = permission.name.replace(before, after)
            permission.save(update_fields=["codename", "name"])


def rename_permissions(apps, schema_editor):
    _rename_permissions(apps, OLD, NEW, PERMISSION_NAMES)


def rename_permissions_back(apps, schema_editor):
    _rename_permissions(apps, NEW, OLD, {v: k for k, v in PERMISSION_NAMES.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("bookings", "0012_venue_seat_fields"),
        ("flights", "0006_flight_id_is_its_sale_id"),
        ("waitroom", "0009_room_requires_verified_email"),
    ]

    operations = [
        migrations.RunPython(check_flights_are_their_sales, migrations.RunPython.noop),
        migrations.RenameModel("ProtectedSale", "WaitingRoom"),
        migrations.RemoveConstraint(model_name="waitingroom", name="protected_sale_one_per_flight"),
        migrations.RemoveConstraint(model_name="waitingroom", name="protected_sale_flight_named"),
        # Backwards this runs after the two columns are back, before their constraints are.
        migrations.RunPython(migrations.RunPython.noop, refill_kind_and_flight),
        migrations.RemoveField(model_name="waitingroom", name="flight"),
        migrations.RemoveField(model_name="waitingroom", name="kind"),
        migrations.AlterField(
            model_name="waitingroom",
            name="sale",
            field=models.ForeignKey(
                help_text="The engine's sale behind the waiting room: holds on it need admission.",
                on_delete=django.db.models.deletion.CASCADE,
                related_name="waiting_rooms",
                to="bookings.sale",
            ),
        ),
        migrations.AlterModelOptions(
            name="waitingroom",
            options={
                "ordering": ["-opens_at"],
                "permissions": [("pause_waitingroom", "Can pause and resume admission")],
            },
        ),
        migrations.RunPython(rename_permissions, rename_permissions_back),
        # The index and the constraint naming the column are made again around its rename
        # (SQLite, the embedded mode, rebuilds the table to rename a foreign key).
        migrations.RemoveConstraint("queueentry", "queue_entry_one_per_customer"),
        migrations.RemoveIndex("queueentry", "queue_entry_order_idx"),
        migrations.RemoveIndex("admission", "admission_sale_time_idx"),
        migrations.RenameField(model_name="queueentry", old_name="sale", new_name="room"),
        migrations.RenameField(model_name="admission", old_name="sale", new_name="room"),
        migrations.AddConstraint(
            "queueentry",
            models.UniqueConstraint(
                fields=["room", "customer"], name="queue_entry_one_per_customer"
            ),
        ),
        migrations.AddIndex(
            "queueentry",
            models.Index(fields=["room", "status", "order_key"], name="queue_entry_order_idx"),
        ),
        migrations.AddIndex(
            "admission",
            models.Index(fields=["room", "admitted_at"], name="admission_sale_time_idx"),
        ),
        migrations.AlterModelOptions(
            name="queueentry",
            options={
                "ordering": ["room_id", "order_key", "id"],
                "verbose_name_plural": "queue entries",
            },
        ),
        migrations.AlterModelOptions(
            name="admission", options={"ordering": ["room_id", "admitted_at", "id"]}
        ),
    ]
