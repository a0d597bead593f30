"""The waitlist joins the sale engine (issue 14): WaitlistEntry moves from `waitroom` to
`bookings`.

No row is copied and no table is touched: the model keeps its table (`db_table =
"waitroom_waitlistentry"`), its indexes and its constraints, and only Django's idea of which
app owns it changes (`SeparateDatabaseAndState` here and in waitroom 0008, which runs after
this one).  The model's content type moves along, so staff permissions on waitlist entries and
the admin's history of them stay attached."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _move_content_type(apps, *, source: str, target: str) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    if content_type.objects.filter(app_label=target, model="waitlistentry").exists():
        return  # already there (a database created after the move)
    content_type.objects.filter(app_label=source, model="waitlistentry").update(app_label=target)


def content_type_to_bookings(apps, schema_editor):
    _move_content_type(apps, source="waitroom", target="bookings")


def content_type_to_waitroom(apps, schema_editor):
    _move_content_type(apps, source="bookings", target="waitroom")


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0012_venue_seat_fields"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("waitroom", "0007_protected_sale_by_sale"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='WaitlistEntry',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('fare_class', models.CharField(help_text='Inventory-class code of the sale.', max_length=10)),
                        ('party_size', models.PositiveSmallIntegerField()),
                        ('status', models.CharField(choices=[('WAITING', 'Waiting'), ('OFFERED', 'Offered a hold'), ('BOOKED', 'Booked'), ('LAPSED', 'Offer lapsed'), ('LEFT', 'Left the waitlist'), ('CLOSED', 'Closed (flight departed)')], default='WAITING', max_length=10)),
                        ('joined_at', models.DateTimeField()),
                        ('offered_at', models.DateTimeField(blank=True, null=True)),
                        ('closed_at', models.DateTimeField(blank=True, null=True)),
                        ('customer', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='waitlist_entries', to=settings.AUTH_USER_MODEL)),
                        ('offer', models.OneToOneField(blank=True, help_text='The hold created for this entry when units freed up.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='waitlist_entry', to='bookings.booking')),
                        ('sale', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='waitlist', to='bookings.sale')),
                    ],
                    options={
                        'verbose_name_plural': 'waitlist entries',
                        'db_table': 'waitroom_waitlistentry',
                        'ordering': ['id'],
                        'indexes': [models.Index(condition=models.Q(('status', 'WAITING')), fields=['sale', 'fare_class', 'id'], name='waitlist_waiting_order_idx')],
                        'constraints': [models.UniqueConstraint(condition=models.Q(('status__in', ['WAITING', 'OFFERED'])), fields=('sale', 'fare_class', 'customer'), name='waitlist_one_active_entry_per_customer'), models.CheckConstraint(condition=models.Q(('party_size__gte', 1), ('party_size__lte', 9)), name='waitlist_party_1_to_9'), models.CheckConstraint(condition=models.Q(models.Q(('status', 'OFFERED'), _negated=True), ('offer__isnull', False), _connector='OR'), name='waitlist_offer_has_booking')],
                    },
                ),
            ],
        ),
        migrations.RunPython(content_type_to_bookings, content_type_to_waitroom),
    ]
