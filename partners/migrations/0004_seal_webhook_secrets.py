"""Partner signing secrets sealed at rest (partners.secret_box), and room for a second live
secret during a rotation.  Every existing secret is sealed forwards and opened backwards."""

from django.db import migrations, models

from partners.secret_box import open_sealed, seal


def seal_secrets(apps, schema_editor):
    WebhookEndpoint = apps.get_model("partners", "WebhookEndpoint")
    for endpoint in WebhookEndpoint.objects.all():
        endpoint.secret_sealed = seal(endpoint.secret)
        endpoint.save(update_fields=["secret_sealed"])


def open_secrets(apps, schema_editor):
    WebhookEndpoint = apps.get_model("partners", "WebhookEndpoint")
    for endpoint in WebhookEndpoint.objects.all():
        # The current secret only: the old shape had no second one.
        endpoint.secret = open_sealed(endpoint.secret_sealed)
        endpoint.save(update_fields=["secret"])


class Migration(migrations.Migration):
    dependencies = [("partners", "0003_receive_all_bookings_permission")]

    operations = [
        migrations.AddField(
            model_name="webhookendpoint",
            name="secret_sealed",
            field=models.TextField(default=""),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="webhookendpoint",
            name="previous_secret_sealed",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="webhookendpoint",
            name="previous_secret_expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="webhookendpoint",
            name="secret",
            field=models.CharField(default="", max_length=100),
        ),
        migrations.RunPython(seal_secrets, open_secrets),
        migrations.RemoveField(model_name="webhookendpoint", name="secret"),
    ]
