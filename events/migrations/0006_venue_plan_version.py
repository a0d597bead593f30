"""Issue 29, item 5: a venue's plan carries a version, counted up by every save, so the
seat-map editor's API refuses a save drawn over an older plan (If-Match)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("events", "0005_venue_seat_quality_and_neighbours")]

    operations = [
        migrations.AddField(
            model_name="venue",
            name="plan_version",
            field=models.PositiveIntegerField(
                default=1,
                help_text="Counts the plan's saves: the seat-map editor refuses a save over a "
                "newer plan (its API's ETag / If-Match).",
            ),
        ),
    ]
