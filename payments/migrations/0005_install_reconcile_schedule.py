from django.db import migrations


def install(apps, schema_editor):
    from kernel.schedules import install_schedules

    install_schedules(
        interval_model=apps.get_model("django_celery_beat", "IntervalSchedule"),
        task_model=apps.get_model("django_celery_beat", "PeriodicTask"),
    )


class Migration(migrations.Migration):
    """Adds the stuck-payment reconciliation to beat (install_schedules is idempotent)."""

    dependencies = [
        ("payments", "0004_payment_client_secret_token_sandbox_canceled"),
        ("bookings", "0004_install_schedules"),
    ]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
