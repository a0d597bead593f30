from django.db import migrations

from kernel.schedules import install_schedules_operation


class Migration(migrations.Migration):
    """Adds the waitlist's periodic task to beat (install_schedules is idempotent)."""

    dependencies = [
        ("waitroom", "0001_initial"),
        ("bookings", "0004_install_schedules"),
    ]

    operations = [install_schedules_operation()]
