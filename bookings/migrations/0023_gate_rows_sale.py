"""Ticket credentials and gate scans carry their sale, and the gate's keys are per sale, so a
Citus cluster can distribute them by sale beside their tickets (kernel/sharding.py,
docs/performance.md "Beyond one primary").

Each sale column is added nullable, copied from the parent (a credential's ticket, a scan's
device: a scan of an unknown serial has no ticket, but always a device), then made NOT NULL.
The rules gain the sale:

* a ticket serial and a certificate id are unique per sale: both are random (96 bits), and
  every lookup already names the sale (the gate's, or the one the signed code carries);
* one current credential per (sale, ticket) and one scan per (sale, device, local id) are the
  same rules as before: a ticket and a device are of one sale.

Backwards the columns are dropped (they only repeated the parents' sale) and the rules narrow
again; that fails only if two sales share a serial or a certificate id, which the old code
never wrote."""

import django.db.models.deletion
from django.db import migrations, models

FILL_CREDENTIALS = """
UPDATE bookings_ticketcredential SET sale_id = (
    SELECT t.sale_id FROM bookings_ticket t WHERE t.id = bookings_ticketcredential.ticket_id
) WHERE sale_id IS NULL
"""
FILL_SCANS = """
UPDATE bookings_gatescan SET sale_id = (
    SELECT d.sale_id FROM bookings_gatedevice d WHERE d.id = bookings_gatescan.device_id
) WHERE sale_id IS NULL
"""


def sale_key(**kwargs):
    return models.ForeignKey(
        on_delete=django.db.models.deletion.PROTECT,
        related_name="+",
        to="bookings.sale",
        **kwargs,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0022_passenger_seat_conditions_confirmed_at"),
    ]

    operations = [
        # Credentials: the ticket's sale; cert ids and the current credential per sale.
        migrations.AddField(
            model_name="ticketcredential", name="sale", field=sale_key(null=True)
        ),
        migrations.RunSQL(FILL_CREDENTIALS, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(model_name="ticketcredential", name="sale", field=sale_key()),
        migrations.AlterField(
            model_name="ticketcredential",
            name="cert_id",
            field=models.CharField(help_text="Random; unique within the sale.", max_length=24),
        ),
        migrations.AddConstraint(
            model_name="ticketcredential",
            constraint=models.UniqueConstraint(
                fields=("sale", "cert_id"), name="credential_cert_id_per_sale"
            ),
        ),
        migrations.RemoveConstraint(
            model_name="ticketcredential", name="one_current_credential_per_ticket"
        ),
        migrations.AddConstraint(
            model_name="ticketcredential",
            constraint=models.UniqueConstraint(
                condition=models.Q(("superseded_at__isnull", True)),
                fields=("sale", "ticket"),
                name="one_current_credential_per_ticket",
            ),
        ),
        # Scans: the device's sale; one per (sale, device, local id).
        migrations.AddField(model_name="gatescan", name="sale", field=sale_key(null=True)),
        migrations.RunSQL(FILL_SCANS, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(model_name="gatescan", name="sale", field=sale_key()),
        migrations.RemoveConstraint(model_name="gatescan", name="one_scan_per_local_id"),
        migrations.AddConstraint(
            model_name="gatescan",
            constraint=models.UniqueConstraint(
                fields=("sale", "device", "local_id"), name="one_scan_per_local_id"
            ),
        ),
        # Tickets: the serial is unique per sale, where every lookup finds it.
        migrations.AlterField(
            model_name="ticket", name="serial", field=models.CharField(max_length=24)
        ),
        migrations.AddConstraint(
            model_name="ticket",
            constraint=models.UniqueConstraint(
                fields=("sale", "serial"), name="ticket_serial_per_sale"
            ),
        ),
    ]
