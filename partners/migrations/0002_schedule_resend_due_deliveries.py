from django.db import migrations

NAME = "partners: resend overdue webhook deliveries"


def install(apps, schema_editor):
    interval_model = apps.get_model("django_celery_beat", "IntervalSchedule")
    task_model = apps.get_model("django_celery_beat", "PeriodicTask")
    interval, _ = interval_model.objects.get_or_create(every=30, period="seconds")
    task_model.objects.update_or_create(
        name=NAME,
        defaults={
            "task": "partners.resend_due_deliveries",
            "interval": interval,
            "crontab": None,
            "solar": None,
            "clocked": None,
            "expire_seconds": 25,
            "enabled": True,
            "one_off": False,
        },
    )


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("partners", "0001_webhook_endpoints_and_deliveries"),
        ("django_celery_beat", "0018_improve_crontab_helptext"),
    ]

    operations = [migrations.RunPython(install, remove)]
