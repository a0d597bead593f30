from django.db import migrations


def install(apps, schema_editor):
    from kernel.schedules import install_schedules

    install_schedules(
        interval_model=apps.get_model("django_celery_beat", "IntervalSchedule"),
        task_model=apps.get_model("django_celery_beat", "PeriodicTask"),
    )


class Migration(migrations.Migration):
    """Adds the resend of overdue webhook deliveries to beat (install_schedules is idempotent)."""

    dependencies = [
        ("partners", "0001_webhook_endpoints_and_deliveries"),
        ("bookings", "0004_install_schedules"),
    ]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
