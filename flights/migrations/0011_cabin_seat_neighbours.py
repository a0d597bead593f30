"""Issue 29: the engine seats of every flight learn their neighbours from the cabin: the
aisle between the halves of the cabin's letters (flights.seat_places, copied here as it is
today so this migration keeps meaning what it did)."""

from django.db import migrations


def _places(row_letters, cabin_letters):
    letters = sorted(set(cabin_letters))
    left = letters[: (len(letters) + 1) // 2]
    mine = sorted(set(row_letters))
    on_left = [x for x in mine if x in left]
    on_right = [x for x in mine if x not in left]
    places = {x: i for i, x in enumerate(on_left, start=1)}
    places.update({x: len(on_left) + 1 + i for i, x in enumerate(on_right, start=1)})
    return places


def fill_cabin_neighbours(apps, schema_editor):
    Flight = apps.get_model("flights", "Flight")
    Seat = apps.get_model("bookings", "Seat")
    for sale_id in Flight.objects.values_list("sale_id", flat=True):
        seats = list(Seat.objects.filter(sale_id=sale_id).only("id", "row", "letter"))
        cabin = {s.letter for s in seats}
        rows = {}
        for seat in seats:
            rows.setdefault(seat.row, set()).add(seat.letter)
        places = {row: _places(letters, cabin) for row, letters in rows.items()}
        for seat in seats:
            seat.row_key = str(seat.row)
            seat.place = places[seat.row][seat.letter]
            seat.quality = float(seat.row)
        Seat.objects.bulk_update(seats, ["row_key", "place", "quality"], batch_size=2000)


class Migration(migrations.Migration):
    dependencies = [
        ("flights", "0010_online_checkin"),
        ("bookings", "0016_seat_neighbours_and_seated_waitlists"),
    ]

    operations = [
        # Backwards: the engine's columns go with bookings 0015; nothing to undo here.
        migrations.RunPython(fill_cabin_neighbours, migrations.RunPython.noop),
    ]
