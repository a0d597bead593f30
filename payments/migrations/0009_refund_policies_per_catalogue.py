"""Refund policies belong to a catalogue (and optionally one sale), no longer to a class code
across every sale.  Every existing policy becomes the flight catalogue's: they were made for
fare classes (BUSINESS, ECONOMY), which only flights sell."""

import django.db.models.deletion
from django.db import migrations, models


def keep_only_flight_catalogue_policies(apps, schema_editor):
    # Backwards, a class code is unique again: only the flight catalogue's policies for a
    # named class fit the old shape (event and per-sale policies did not exist then).
    RefundPolicy = apps.get_model("payments", "RefundPolicy")
    RefundPolicy.objects.exclude(kind="FLIGHT", sale__isnull=True).delete()
    RefundPolicy.objects.filter(fare_class="").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0013_waitlist_joins_the_engine"),
        ("payments", "0008_refund_reason_amount_mismatch"),
    ]

    operations = [
        migrations.AddField(
            model_name="refundpolicy",
            name="kind",
            field=models.CharField(
                choices=[("FLIGHT", "Flight"), ("EVENT", "Event")],
                default="FLIGHT",
                help_text="The catalogue this policy is for.",
                max_length=10,
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="refundpolicy",
            name="sale",
            field=models.ForeignKey(
                blank=True,
                help_text="Only this sale (an override); blank: every sale of the catalogue.",
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="bookings.sale",
            ),
        ),
        migrations.AlterField(
            model_name="refundpolicy",
            name="fare_class",
            field=models.CharField(
                blank=True, help_text="Inventory-class code; blank: every class.", max_length=10
            ),
        ),
        migrations.RunPython(migrations.RunPython.noop, keep_only_flight_catalogue_policies),
        migrations.AlterModelOptions(
            name="refundpolicy",
            options={
                "ordering": ["kind", "sale_id", "fare_class"],
                "verbose_name_plural": "refund policies",
            },
        ),
        migrations.AddConstraint(
            model_name="refundpolicy",
            constraint=models.UniqueConstraint(
                condition=models.Q(("sale__isnull", True)),
                fields=("kind", "fare_class"),
                name="refund_policy_one_per_catalogue_class",
            ),
        ),
        migrations.AddConstraint(
            model_name="refundpolicy",
            constraint=models.UniqueConstraint(
                condition=models.Q(("sale__isnull", False)),
                fields=("sale", "fare_class"),
                name="refund_policy_one_per_sale_class",
            ),
        ),
    ]
