"""The departure record per cabin carries the volunteers and the passengers denied boarding
(issue 28): the forecast counts them as shows.  Airports get their city and name in German and
Russian (issue 31), filled in for the airports the demo knows (a copy of
flights/airport_names.py as it was: a migration must not follow later edits)."""

from django.db import migrations, models

LOCAL_NAMES = {
    'SGN': ('Ho-Chi-Minh-Stadt', 'Internationaler Flughafen Tan Son Nhat', 'Хошимин', 'Международный аэропорт Таншоннят'),
    'HAN': ('Hanoi', 'Internationaler Flughafen Noi Bai', 'Ханой', 'Международный аэропорт Нойбай'),
    'DAD': ('Đà Nẵng', 'Internationaler Flughafen Đà Nẵng', 'Дананг', 'Международный аэропорт Дананг'),
    'FRA': ('Frankfurt am Main', 'Flughafen Frankfurt am Main', 'Франкфурт-на-Майне', 'Аэропорт Франкфурт-на-Майне'),
    'MUC': ('München', 'Flughafen München Franz Josef Strauß', 'Мюнхен', 'Аэропорт Мюнхен имени Франца Йозефа Штрауса'),
    'BER': ('Berlin', 'Flughafen Berlin Brandenburg', 'Берлин', 'Аэропорт Берлин-Бранденбург'),
    'SVO': ('Moskau', 'Internationaler Flughafen Scheremetjewo', 'Москва', 'Международный аэропорт Шереметьево'),
    'LED': ('Sankt Petersburg', 'Flughafen Pulkowo', 'Санкт-Петербург', 'Аэропорт Пулково'),
}


def fill_local_names(apps, schema_editor):
    Airport = apps.get_model("flights", "Airport")
    for code, (city_de, name_de, city_ru, name_ru) in LOCAL_NAMES.items():
        Airport.objects.filter(code=code).update(
            city_de=city_de, name_de=name_de, city_ru=city_ru, name_ru=name_ru
        )


class Migration(migrations.Migration):
    dependencies = [
        ("flights", "0012_denied_boarding"),
    ]

    operations = [
        migrations.AddField(
            model_name="airport",
            name="name_de",
            field=models.CharField(blank=True, default="", max_length=120, verbose_name="name (German)"),
        ),
        migrations.AddField(
            model_name="airport",
            name="name_ru",
            field=models.CharField(blank=True, default="", max_length=120, verbose_name="name (Russian)"),
        ),
        migrations.AddField(
            model_name="airport",
            name="city_de",
            field=models.CharField(blank=True, default="", max_length=80, verbose_name="city (German)"),
        ),
        migrations.AddField(
            model_name="airport",
            name="city_ru",
            field=models.CharField(blank=True, default="", max_length=80, verbose_name="city (Russian)"),
        ),
        migrations.RunPython(fill_local_names, migrations.RunPython.noop),
        migrations.AddField(
            model_name="cabindeparture",
            name="volunteers",
            field=models.PositiveIntegerField(
                default=0, help_text="Gave up their seat for compensation (Art. 4(1)): shows."
            ),
        ),
        migrations.AddField(
            model_name="cabindeparture",
            name="denied",
            field=models.PositiveIntegerField(
                default=0, help_text="Denied boarding against their will (Art. 4(3)): shows."
            ),
        ),
        migrations.AddConstraint(
            model_name="cabindeparture",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    no_shows__lte=models.F("sold") - models.F("volunteers") - models.F("denied")
                ),
                name="cabin_departure_taken_off_of_sold",
            ),
        ),
    ]
