"""Exit-row confirmations given at online check-in before bookings 0022 are carried onto the
passenger (issue 31).  Since 0022 the passenger's `seat_conditions_confirmed_at` is the one
record every rule reads (check-in, the denied-boarding reseat, the gate's boarding scan);
before it, online check-in wrote only `OnlineCheckIn.exit_row_confirmed`, so those passengers
would be asked again at the gate although they had confirmed.  Each gets the time of the
check-in that confirmed it; a passenger who confirmed since (a later time of their own)
keeps it.

No other confirmation was ever stored: before 0022 the seat picker and the API hold refused
an unconfirmed exit-row seat but kept no record that it was confirmed, so there is nothing
more to carry (a passenger seated then and not checked in since is asked at the gate).

Backwards, each passenger's confirmation is written onto their check-in row (its flag only
ever turns on), so the code before this migration, which read the flag when passing on a
denied passenger's seat, still sees every confirmation.  Nothing is lost either way."""

from django.db import migrations
from django.db.models import OuterRef, Subquery


def carry_onto_passengers(apps, schema_editor):
    Passenger = apps.get_model("bookings", "Passenger")
    OnlineCheckIn = apps.get_model("flights", "OnlineCheckIn")
    confirmed_at_check_in = OnlineCheckIn.objects.filter(
        passenger_id=OuterRef("pk"), exit_row_confirmed=True
    ).values("checked_in_at")[:1]
    Passenger.objects.filter(
        seat_conditions_confirmed_at__isnull=True,
        pk__in=OnlineCheckIn.objects.filter(exit_row_confirmed=True).values("passenger_id"),
    ).update(seat_conditions_confirmed_at=Subquery(confirmed_at_check_in))


def carry_onto_check_ins(apps, schema_editor):
    Passenger = apps.get_model("bookings", "Passenger")
    OnlineCheckIn = apps.get_model("flights", "OnlineCheckIn")
    OnlineCheckIn.objects.filter(
        exit_row_confirmed=False,
        passenger_id__in=Passenger.objects.filter(
            seat_conditions_confirmed_at__isnull=False
        ).values("pk"),
    ).update(exit_row_confirmed=True)


class Migration(migrations.Migration):
    dependencies = [
        ("bookings", "0022_passenger_seat_conditions_confirmed_at"),
        ("flights", "0014_day_of_departure_keys_by_sale"),
    ]

    operations = [migrations.RunPython(carry_onto_passengers, carry_onto_check_ins)]
