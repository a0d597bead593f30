from django.db import migrations, models

from kernel.schedules import install_schedules_operation


class Migration(migrations.Migration):
    """The event log (docs/event-log.md): `logged_at` on the outbox, the relay's lease, and
    its beat schedule.  Events already in the outbox stay unlogged, so a log switched on later
    receives what the outbox still keeps.  The outbox table is created by bookings' migrations
    (kernel/0001 only took it over), hence the dependency."""

    dependencies = [
        ("kernel", "0001_initial"),
        ("bookings", "0008_move_outbox_to_kernel"),
    ]

    operations = [
        migrations.CreateModel(
            name='RelayLease',
            fields=[
                ('name', models.CharField(max_length=40, primary_key=True, serialize=False)),
                ('holder', models.CharField(max_length=120)),
                ('expires_at', models.DateTimeField()),
            ],
        ),
        migrations.AddField(
            model_name='outboxevent',
            name='logged_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='outboxevent',
            index=models.Index(condition=models.Q(('logged_at__isnull', True)), fields=['id'], name='outbox_unlogged_idx'),
        ),
        install_schedules_operation(),
    ]
