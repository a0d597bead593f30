from django.db import migrations


def install(apps, schema_editor):
    from kernel.schedules import install_schedules

    install_schedules(
        interval_model=apps.get_model("django_celery_beat", "IntervalSchedule"),
        task_model=apps.get_model("django_celery_beat", "PeriodicTask"),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0003_tickets_receipts_notifications"),
        ("django_celery_beat", "0018_improve_crontab_helptext"),
    ]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
