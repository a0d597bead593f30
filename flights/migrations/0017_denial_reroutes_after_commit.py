"""A denial's rerouting is booked after the denial commits, on the later flight's sale, as a
step of its own (flights.rerouting), so each transaction writes one sale (kernel/sharding.py).

So a rerouting's DeniedBoarding exists for a moment without its new booking: the CHECK asks
a rerouting for its (planned) arrival delay instead, and the link to the new booking, a row
of another sale, keeps no database key (a cluster distributed by sale cannot keep one across
sales; the ORM still protects the booking).  Backwards the old CHECK returns: it refuses a
rerouting still being booked, so the migration stops and says to finish them first.  The beat
job `flights: reroute pending denials` is installed (the safety net for a lost task)."""

import django.db.models.deletion
from django.db import migrations, models

from kernel.schedules import install_schedules_operation

NAME = "denied_boarding_rerouting_names_its_booking"


def refuse_pending_reroutings(apps, schema_editor):
    DeniedBoarding = apps.get_model("flights", "DeniedBoarding")
    pending = DeniedBoarding.objects.filter(remedy="REROUTING", rebooked_onto__isnull=True)
    if pending.exists():
        raise RuntimeError(
            f"{pending.count()} rerouting(s) still being booked: run "
            "flights.rerouting.reroute_pending() until none is left, then migrate back."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0023_gate_rows_sale"),
        ("flights", "0016_flight_numbers"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="deniedboarding", name=NAME),
        migrations.RunPython(migrations.RunPython.noop, reverse_code=refuse_pending_reroutings),
        migrations.AlterField(
            model_name="deniedboarding",
            name="rebooked_onto",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                help_text=(
                    "The new booking on the next flight of the route (rerouting; empty while "
                    "it is being booked)."
                ),
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="rebooked_from",
                to="bookings.booking",
            ),
        ),
        migrations.AddConstraint(
            model_name="deniedboarding",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("rebooked_onto__isnull", True), ("remedy", "REFUND")),
                    models.Q(("remedy", "REROUTING"), ("rerouted_arrival_delay__isnull", False)),
                    _connector="OR",
                ),
                name=NAME,
            ),
        ),
        # The beat job that books a rerouting whose task was lost (flights.schedules).
        install_schedules_operation(),
    ]
