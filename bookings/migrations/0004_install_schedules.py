from django.db import migrations

from kernel.schedules import install_schedules_operation


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0003_tickets_receipts_notifications"),
        ("django_celery_beat", "0018_improve_crontab_helptext"),
    ]

    operations = [install_schedules_operation()]
