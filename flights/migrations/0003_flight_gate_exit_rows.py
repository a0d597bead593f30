from django.db import migrations, models


def mark_a320_exit_rows(apps, schema_editor):
    """Flights created before this migration all use the A320 layout: exits at rows 12-13."""
    Flight = apps.get_model("flights", "Flight")
    Flight.objects.update(exit_rows=[12, 13])


class Migration(migrations.Migration):
    dependencies = [("flights", "0002_install_hold_counter_schedule")]

    operations = [
        migrations.AddField(
            model_name="flight",
            name="gate",
            field=models.CharField(
                blank=True, default="", help_text="Departure gate; empty until known.", max_length=8
            ),
        ),
        migrations.AddField(
            model_name="flight",
            name="exit_rows",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Row numbers of the emergency exit rows (from the cabin layout).",
            ),
        ),
        migrations.RunPython(mark_a320_exit_rows, migrations.RunPython.noop),
    ]
