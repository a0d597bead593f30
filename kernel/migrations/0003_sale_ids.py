"""Outbox events, their consumers' receipts and the hold's idempotency records carry the
engine sale they belong to, so a Citus cluster can distribute them by sale beside the sale's
rows (kernel/sharding.py, docs/performance.md "Beyond one primary").

Each column is added nullable, filled, then made NOT NULL:

* an event's sale is its booking's (every event is a booking's), else the sale or flight its
  payload names (a flight's id is its sale id);
* a receipt's is its event's;
* an idempotency record's is the sale of the booking it made.  A record that names no
  booking (only rows written before bookings 0008 without one) answers nothing a retry
  needs and is deleted: a retry with its key asks again, as a key never seen does.

The unique rules gain the sale: (sale, consumer, event) is the same rule as (consumer,
event); (sale, customer, scope, key) makes a hold key one per sale (the request names its
sale before the transaction), so a key reused on another sale is a new request.  Backwards
the columns are dropped (they only repeat what the rows' parents say) and the rules narrow
again; the deleted unlinked records do not come back."""

from django.conf import settings
from django.db import migrations, models
from django.db.models import OuterRef, Subquery
from django.db.models.functions import Cast


def _booking_sale(apps, column: str):
    """The sale of the booking whose id (as text) is the outer row's `column`."""
    Booking = apps.get_model("bookings", "Booking")
    return Subquery(
        Booking.objects.annotate(key=Cast("pk", models.CharField()))
        .filter(key=OuterRef(column))
        .values("sale_id")[:1]
    )


def fill(apps, schema_editor):
    """The ORM, not SQL: the embedded mode migrates SQLite with the same files."""
    Event = apps.get_model("kernel", "OutboxEvent")
    Receipt = apps.get_model("kernel", "ProcessedEvent")
    Record = apps.get_model("kernel", "IdempotencyRecord")
    Event.objects.filter(sale_id__isnull=True, aggregate_type="booking").update(
        sale_id=_booking_sale(apps, "aggregate_id")
    )
    for pk, payload in list(
        Event.objects.filter(sale_id__isnull=True).values_list("pk", "payload")
    ):
        named = (payload or {}).get("saleId") or (payload or {}).get("flightId")
        if named is None:
            raise RuntimeError(
                f"outbox event {pk} names no booking, sale or flight: set its sale_id, then migrate"
            )
        Event.objects.filter(pk=pk).update(sale_id=int(named))
    Receipt.objects.filter(sale_id__isnull=True).update(
        sale_id=Subquery(Event.objects.filter(pk=OuterRef("event_id")).values("sale_id")[:1])
    )
    Record.objects.filter(sale_id__isnull=True, resource_type="bookings.booking").update(
        sale_id=_booking_sale(apps, "resource_id")
    )
    Record.objects.filter(sale_id__isnull=True).delete()


def column(**kwargs):
    return models.BigIntegerField(**kwargs)


class Migration(migrations.Migration):
    dependencies = [
        ("kernel", "0002_event_log"),
        ("bookings", "0010_sale_keys"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        *(
            migrations.AddField(model_name=model, name="sale_id", field=column(null=True))
            for model in ("outboxevent", "processedevent", "idempotencyrecord")
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        *(
            migrations.AlterField(model_name=model, name="sale_id", field=column())
            for model in ("outboxevent", "processedevent", "idempotencyrecord")
        ),
        migrations.RemoveConstraint(model_name="processedevent", name="processed_event_once"),
        migrations.AddConstraint(
            model_name="processedevent",
            constraint=models.UniqueConstraint(
                fields=("sale_id", "consumer", "event"), name="processed_event_once"
            ),
        ),
        migrations.RemoveConstraint(
            model_name="idempotencyrecord", name="idempotency_key_per_customer_scope"
        ),
        migrations.AddConstraint(
            model_name="idempotencyrecord",
            constraint=models.UniqueConstraint(
                fields=("sale_id", "customer", "scope", "key"),
                name="idempotency_key_per_customer_scope",
            ),
        ),
    ]
