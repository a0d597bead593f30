from django.db import migrations

from kernel.schedules import install_schedules_operation


class Migration(migrations.Migration):
    """Adds the resend of overdue webhook deliveries to beat (install_schedules is idempotent)."""

    dependencies = [
        ("partners", "0001_webhook_endpoints_and_deliveries"),
        ("bookings", "0004_install_schedules"),
    ]

    operations = [install_schedules_operation()]
