from django.db import migrations

from kernel.schedules import install_schedules_operation


class Migration(migrations.Migration):
    """Adds the rebuild of the hold filters' availability counters to beat (idempotent)."""

    dependencies = [
        ("flights", "0001_initial"),
        ("bookings", "0004_install_schedules"),
    ]

    operations = [install_schedules_operation()]
