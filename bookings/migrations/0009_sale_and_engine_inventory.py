"""The sale engine takes over seats and inventory classes (issue 14), step 1 of 3.

Creates `Sale`, and moves `flights.Seat` and `flights.FareInventory` into the engine as
`bookings.Seat` and `bookings.Inventory` in the migration *state* only: the tables (and every
row, with live holds and confirmed bookings) stay where they are.  flights 0004 then forgets
its copies and gives every flight its sale; bookings 0010 re-points the `flight` keys at the
sale and renames the tables.
"""

from decimal import Decimal

import django.db.models.deletion
from django.db import migrations, models

FARE_CLASSES = [("BUSINESS", "Business"), ("ECONOMY", "Economy")]
SEAT_STATUSES = [
    ("AVAILABLE", "Available"),
    ("HELD", "Held"),
    ("SOLD", "Sold"),
    ("BLOCKED", "Blocked"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0008_move_outbox_to_kernel"),
        ("flights", "0003_flight_gate_exit_rows"),
    ]

    operations = [
        migrations.CreateModel(
            name="Sale",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[("FLIGHT", "Flight"), ("EVENT", "Event")], max_length=10
                    ),
                ),
                ("created_at", models.DateTimeField()),
            ],
            options={"ordering": ["id"]},
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Inventory",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("fare_class", models.CharField(choices=FARE_CLASSES, max_length=10)),
                        ("capacity", models.PositiveIntegerField()),
                        ("overbook_limit", models.PositiveIntegerField(default=0)),
                        ("sold", models.PositiveIntegerField(default=0)),
                        ("held", models.PositiveIntegerField(default=0)),
                        ("price", models.DecimalField(decimal_places=2, max_digits=12)),
                        ("currency", models.CharField(default="EUR", max_length=3)),
                        (
                            "flight",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="inventories",
                                to="flights.flight",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "flights_fareinventory",
                        "ordering": ["flight_id", "fare_class"],
                        "verbose_name_plural": "fare inventories",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("flight", "fare_class"), name="inventory_flight_class_uniq"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    sold__lte=models.F("capacity")
                                    + models.F("overbook_limit")
                                    - models.F("held")
                                ),
                                name="inventory_sold_plus_held_within_limit",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(sold__gte=0), name="inventory_sold_non_negative"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(held__gte=0), name="inventory_held_non_negative"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(capacity__gte=0),
                                name="inventory_capacity_non_negative",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(overbook_limit__gte=0),
                                name="inventory_overbook_non_negative",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(price__gte=Decimal("0")),
                                name="inventory_price_non_negative",
                            ),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="Seat",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("seat_no", models.CharField(max_length=4)),
                        ("row", models.PositiveSmallIntegerField()),
                        ("letter", models.CharField(max_length=1)),
                        ("fare_class", models.CharField(choices=FARE_CLASSES, max_length=10)),
                        (
                            "status",
                            models.CharField(
                                choices=SEAT_STATUSES, default="AVAILABLE", max_length=10
                            ),
                        ),
                        ("held_until", models.DateTimeField(blank=True, null=True)),
                        (
                            "surcharge",
                            models.DecimalField(
                                decimal_places=2, default=Decimal("0.00"), max_digits=10
                            ),
                        ),
                        (
                            "booking",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="bookings.booking",
                            ),
                        ),
                        (
                            "flight",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="seats",
                                to="flights.flight",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "flights_seat",
                        "ordering": ["flight_id", "row", "letter"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("flight", "seat_no"), name="seat_flight_seat_no_uniq"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    models.Q(
                                        booking__isnull=True,
                                        held_until__isnull=True,
                                        status="AVAILABLE",
                                    ),
                                    models.Q(
                                        booking__isnull=True,
                                        held_until__isnull=True,
                                        status="BLOCKED",
                                    ),
                                    models.Q(
                                        booking__isnull=False,
                                        held_until__isnull=False,
                                        status="HELD",
                                    ),
                                    models.Q(
                                        booking__isnull=False,
                                        held_until__isnull=True,
                                        status="SOLD",
                                    ),
                                    _connector="OR",
                                ),
                                name="seat_status_matches_booking",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(surcharge__gte=0),
                                name="seat_surcharge_non_negative",
                            ),
                        ],
                    },
                ),
                migrations.AlterField(
                    model_name="passenger",
                    name="seat",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="passengers",
                        to="bookings.seat",
                    ),
                ),
            ],
        ),
    ]
