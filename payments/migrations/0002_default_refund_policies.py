from django.db import migrations
from django.utils import timezone

DEFAULTS = {
    # fare class: (full refund until N days before, then this percent, until H hours before)
    "BUSINESS": (3, 75, 24),
    "ECONOMY": (14, 50, 24),
}


def seed(apps, schema_editor):
    RefundPolicy = apps.get_model("payments", "RefundPolicy")
    for fare_class, (days, percent, hours) in DEFAULTS.items():
        RefundPolicy.objects.get_or_create(
            fare_class=fare_class,
            defaults={"full_refund_days": days, "partial_refund_percent": percent,
                      "partial_refund_hours": hours, "updated_at": timezone.now()},
        )


class Migration(migrations.Migration):
    dependencies = [("payments", "0001_initial")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
