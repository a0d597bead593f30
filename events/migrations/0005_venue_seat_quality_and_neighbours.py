"""Issue 29: venue seats get a staff-set quality score, and the engine seats of every event
on sale learn their neighbours from the plan (row key "2-F", place = the grid column, where
aisles leave gaps), their default quality (distance from the stage centre) and the
single-seat rule (events.sale_snapshot, copied here as it is today)."""

import math

from django.db import migrations, models


def _quality(venue_seats, sections):
    width, depth = {}, {}
    for seat in venue_seats:
        low, high = width.get(seat.section_id, (seat.x, seat.x))
        width[seat.section_id] = (min(low, seat.x), max(high, seat.x))
        depth[seat.section_id] = max(depth.get(seat.section_id, 0), seat.y)
    in_front, rows_so_far = {}, 0
    for section in sorted(sections, key=lambda s: (s.position, s.name, s.pk)):
        in_front[section.pk] = rows_so_far
        rows_so_far += depth.get(section.pk, 0)
    quality = {}
    for seat in venue_seats:
        low, high = width[seat.section_id]
        across = seat.x - (low + high) / 2
        quality[seat.pk] = round(math.hypot(across, in_front[seat.section_id] + seat.y), 3)
    return quality


def fill_venue_neighbours(apps, schema_editor):
    Event = apps.get_model("events", "Event")
    Section = apps.get_model("events", "Section")
    VenueSeat = apps.get_model("events", "VenueSeat")
    Sale = apps.get_model("bookings", "Sale")
    Seat = apps.get_model("bookings", "Seat")
    for event in Event.objects.filter(sale__isnull=False):
        sections = list(Section.objects.filter(venue_id=event.venue_id))
        names = {s.pk: s.name for s in sections}
        venue_seats = list(VenueSeat.objects.filter(section__venue_id=event.venue_id))
        quality = _quality(venue_seats, sections)
        by_place = {(names[v.section_id], v.row.upper(), v.number): v for v in venue_seats}
        seats = list(Seat.objects.filter(sale_id=event.sale_id))
        for seat in seats:
            venue_seat = by_place.get((seat.section, seat.row_label, seat.number))
            if venue_seat is None:
                continue
            seat.row_key = seat.seat_no.rsplit("-", 1)[0]
            seat.place = venue_seat.x
            seat.quality = quality[venue_seat.pk]
        Seat.objects.bulk_update(seats, ["row_key", "place", "quality"], batch_size=2000)
        Sale.objects.filter(pk=event.sale_id).update(keeps_no_single_seats=True)


class Migration(migrations.Migration):
    dependencies = [
        ("events", "0004_category_colour_contrast"),
        ("bookings", "0016_seat_neighbours_and_seated_waitlists"),
    ]

    operations = [
        migrations.AddField(
            model_name="venueseat",
            name="quality",
            field=models.FloatField(
                blank=True,
                help_text=(
                    "Best available ranks seats by this, lower first. Empty: the distance "
                    "from the stage centre."
                ),
                null=True,
            ),
        ),
        # Backwards: the engine's columns go with bookings 0015; nothing to undo here.
        migrations.RunPython(fill_venue_neighbours, migrations.RunPython.noop),
    ]
