"""Payments and refunds carry their booking's sale, so a Citus cluster can distribute them by
sale beside the booking (kernel/sharding.py, docs/performance.md "Beyond one primary").

Add the columns nullable, copy the sale (a payment's from its booking, a refund's from its
payment), then make them NOT NULL; the one-payment-in-flight-per-booking and once-per-reason rules lead
with the sale (the same rules: a booking is of one sale).  Backwards the columns are dropped: they only repeated
what the booking says."""

import django.db.models.deletion
from django.db import migrations, models

FILL_PAYMENTS = """
UPDATE payments_payment SET sale_id = (
    SELECT b.sale_id FROM bookings_booking b WHERE b.id = payments_payment.booking_id
) WHERE sale_id IS NULL
"""
FILL_REFUNDS = """
UPDATE payments_refund SET sale_id = (
    SELECT p.sale_id FROM payments_payment p WHERE p.id = payments_refund.payment_id
) WHERE sale_id IS NULL
"""


def sale_field(*, null: bool) -> models.ForeignKey:
    return models.ForeignKey(
        null=null,
        on_delete=django.db.models.deletion.PROTECT,
        related_name="+",
        to="bookings.sale",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0017_denied_boarding"),
        ("payments", "0009_refund_policies_per_catalogue"),
    ]

    operations = [
        migrations.AddField(model_name="payment", name="sale", field=sale_field(null=True)),
        migrations.AddField(model_name="refund", name="sale", field=sale_field(null=True)),
        migrations.RunSQL(FILL_PAYMENTS, reverse_sql=migrations.RunSQL.noop),
        migrations.RunSQL(FILL_REFUNDS, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(model_name="payment", name="sale", field=sale_field(null=False)),
        migrations.AlterField(model_name="refund", name="sale", field=sale_field(null=False)),
        migrations.RemoveConstraint(model_name="payment", name="payment_one_in_flight_per_booking"),
        migrations.RemoveConstraint(model_name="refund", name="refund_once_per_reason"),
        migrations.AddConstraint(
            model_name="payment",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status__in", ("PROCESSING", "PENDING"))),
                fields=("sale", "booking"),
                name="payment_one_in_flight_per_booking",
            ),
        ),
        migrations.AddConstraint(
            model_name="refund",
            constraint=models.UniqueConstraint(
                fields=("sale", "payment", "reason"), name="refund_once_per_reason"
            ),
        ),
    ]
