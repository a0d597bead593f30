from django.db import migrations

from kernel.schedules import install_schedules_operation


class Migration(migrations.Migration):
    """Adds the stuck-payment reconciliation to beat (install_schedules is idempotent)."""

    dependencies = [
        ("payments", "0004_payment_client_secret_token_sandbox_canceled"),
        ("bookings", "0004_install_schedules"),
    ]

    operations = [install_schedules_operation()]
