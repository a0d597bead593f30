"""A payment's Idempotency-Key is the customer's within the booking's sale: (sale, customer,
key) instead of (customer, key), so a Citus cluster distributed by sale keeps the rule on the
sale's node (kernel/sharding.py, docs/performance.md "Beyond one primary").  The pay request
names its booking, so payments.paying looks the key up in that sale before its transaction.

Forwards nothing is lost: every (customer, key) pair was unique, so each (sale, customer,
key) is.  Backwards a key used by one customer in two sales would break the narrower rule:
all but the customer's first payment under it forget the key, as the retention purge does
(payments.paying.purge_idempotency_keys), before the old constraint returns."""

from django.db import migrations, models

NAME = "payment_idempotency_key_per_customer"
FORGET_LATER_DUPLICATES = """
UPDATE payments_payment p SET idempotency_key = NULL
WHERE p.idempotency_key IS NOT NULL AND EXISTS (
    SELECT 1 FROM payments_payment q
    WHERE q.customer_id = p.customer_id AND q.idempotency_key = p.idempotency_key
      AND q.id < p.id
)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("payments", "0012_refund_resale"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="payment", name=NAME),
        migrations.RunSQL(migrations.RunSQL.noop, reverse_sql=FORGET_LATER_DUPLICATES),
        migrations.AddConstraint(
            model_name="payment",
            constraint=models.UniqueConstraint(
                fields=("sale", "customer", "idempotency_key"), name=NAME
            ),
        ),
        migrations.AlterField(
            model_name="payment",
            name="idempotency_key",
            field=models.CharField(
                blank=True,
                help_text=(
                    "Client's Idempotency-Key, unique per customer and sale; cleared after "
                    "retention."
                ),
                max_length=255,
                null=True,
            ),
        ),
    ]
