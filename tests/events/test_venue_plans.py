import pytest
from django.db import IntegrityError, transaction

from events.errors import InvalidVenuePlan, VenuePlanInUse
from events.models import Section, SectionKind, StageSide, Venue, VenueSeat
from events.plan_parsing import parse_csv, parse_grid
from events.venues import build_venue_plan_from_grid, import_venue_plan_csv
from tests.events.factories import EventFactory, VenueFactory


def test_grid_builds_sections_rows_seats_and_flags():
    plan = parse_grid(
        """
        # the main hall
        stage: bottom
        Section Stalls: rows 1-3 x seats 1-6; aisle after 3; accessible: row 3 seats 1-2
        Section Balcony: rows A-C x seats 1-4; restricted: rows B-C seats 1, 4; restricted: row A
        Standing Floor: capacity 200
        """
    )
    assert plan.stage_side == StageSide.BOTTOM
    stalls, balcony, floor = plan.sections
    assert [s.position for s in plan.sections] == [1, 2, 3]
    assert len(stalls.seats) == 18 and len(balcony.seats) == 12
    assert floor.kind == SectionKind.STANDING and floor.capacity == 200 and not floor.seats
    # The aisle after seat 3 leaves a gap in the drawing: seat 4 is in column 5.
    row1 = [(s.number, s.x, s.y) for s in stalls.seats if s.row == "1"]
    assert row1 == [(1, 1, 1), (2, 2, 1), (3, 3, 1), (4, 5, 1), (5, 6, 1), (6, 7, 1)]
    assert {(s.row, s.number) for s in stalls.seats if s.accessible} == {("3", 1), ("3", 2)}
    restricted = {(s.row, s.number) for s in balcony.seats if s.restricted_view}
    assert restricted == {
        ("A", 1),
        ("A", 2),
        ("A", 3),
        ("A", 4),
        ("B", 1),
        ("B", 4),
        ("C", 1),
        ("C", 4),
    }
    assert [s.row_index for s in balcony.seats if s.number == 1] == [1, 2, 3]


def test_grid_reports_every_bad_line_with_its_number():
    with pytest.raises(InvalidVenuePlan) as caught:
        parse_grid(
            "Section Stalls: rows 1-3 x seats 1-6\n"
            "Section Stalls: rows 1-2 x seats 1-2\n"
            "\n"
            "Sektion X: rows 1-2 x seats 1-2\n"
            "Section Y: rows 5-2 x seats 1-2\n"
            "Section Z: rows 1-2 x seats 1-4; accessible: row 9 seats 1\n"
            "Standing Floor: capacity 0\n"
            "stage: sideways\n"
        )
    problems = caught.value.problems
    assert [p.split(":")[0] for p in problems] == [
        "Line 2",
        "Line 4",
        "Line 5",
        "Line 6",
        "Line 7",
        "Line 8",
    ]
    assert 'section "Stalls" is already on line 1' in problems[0]
    assert "Line 4" in caught.value.detail


def test_grid_without_sections_is_refused():
    with pytest.raises(InvalidVenuePlan, match="no sections"):
        parse_grid("# nothing yet\n\n")


@pytest.mark.django_db
def test_building_replaces_the_plan_all_or_nothing():
    venue = VenueFactory(plan="Section Old: rows 1-2 x seats 1-2")
    old_ids = set(VenueSeat.objects.filter(section__venue=venue).values_list("pk", flat=True))
    with pytest.raises(InvalidVenuePlan):
        build_venue_plan_from_grid(
            venue=venue, description="Section New: rows 1-2 x seats 1-9\nbad line"
        )
    assert (
        set(VenueSeat.objects.filter(section__venue=venue).values_list("pk", flat=True)) == old_ids
    )
    build_venue_plan_from_grid(
        venue=venue, description="stage: left\nSection New: rows 1-2 x seats 1-9"
    )
    assert list(Section.objects.filter(venue=venue).values_list("name", flat=True)) == ["New"]
    assert VenueSeat.objects.filter(section__venue=venue).count() == 18
    venue.refresh_from_db()
    assert venue.stage_side == StageSide.LEFT


@pytest.mark.django_db
def test_a_plan_sold_by_events_cannot_be_rebuilt():
    event = EventFactory()
    with pytest.raises(VenuePlanInUse):
        build_venue_plan_from_grid(venue=event.venue, description="Section X: rows 1-2 x seats 1-2")
    with pytest.raises(VenuePlanInUse):
        import_venue_plan_csv(
            venue=event.venue,
            file=b"section,row,number,x,y,accessible,restricted_view\nX,1,1,1,1,,\n",
        )


CSV = """section,row,number,x,y,accessible,restricted_view
Parkett,B,1,1,2,no,no
Parkett,B,2,2,2,,
Parkett,A,1,1,1,yes,
Parkett,A,2,2,1,no,true
Rang,1,1,1,1,0,1
"""


@pytest.mark.django_db
def test_csv_import_orders_rows_by_y_and_keeps_standing_areas():
    venue = VenueFactory(plan="Section Old: rows 1-2 x seats 1-2\nStanding Floor: capacity 10")
    import_venue_plan_csv(venue=venue, file=CSV.encode())
    sections = {s.name: s for s in Section.objects.filter(venue=venue)}
    assert set(sections) == {"Parkett", "Rang", "Floor"}
    assert sections["Floor"].capacity == 10
    seats = {(s.row, s.number): s for s in VenueSeat.objects.filter(section=sections["Parkett"])}
    assert seats[("A", 1)].row_index == 1 and seats[("B", 2)].row_index == 2
    assert seats[("A", 1)].accessible and not seats[("B", 1)].accessible
    assert seats[("A", 2)].restricted_view


def test_csv_reports_bad_lines_and_duplicates():
    with pytest.raises(InvalidVenuePlan) as caught:
        parse_csv(
            "section,row,number,x,y,accessible,restricted_view\n"
            "P,A,1,1,1,,\n"
            "P,A,1,2,1,,\n"  # same seat again
            "P,A,2,1,1,,\n"  # same position again
            "P,A,zero,3,1,,\n"
            "P,A,3,3,1,maybe,\n"
            "P,A,4\n"
        )
    problems = caught.value.problems
    assert [p.split(":")[0] for p in problems] == [
        "Line 5",
        "Line 6",
        "Line 7",
        "Line 3",
        "Line 4",
    ]
    assert "already on line 2" in problems[3]


def test_csv_needs_the_header_and_utf8():
    with pytest.raises(InvalidVenuePlan, match="Line 1: the header"):
        parse_csv("sec,row\nP,A\n")
    with pytest.raises(InvalidVenuePlan, match="UTF-8"):
        parse_csv(b"\xff\xfe\x00")


@pytest.mark.django_db
def test_the_database_refuses_a_seat_twice_and_bad_standing_areas():
    venue = Venue.objects.create(name="X", city="Y", time_zone="UTC")
    section = Section.objects.create(venue=venue, name="S")
    VenueSeat.objects.create(section=section, row="1", row_index=1, number=1, x=1, y=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        VenueSeat.objects.create(section=section, row="1", row_index=1, number=1, x=2, y=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Section.objects.create(venue=venue, name="GA", kind=SectionKind.STANDING, capacity=None)
    with pytest.raises(IntegrityError), transaction.atomic():
        Section.objects.create(venue=venue, name="Seated", capacity=5)


def test_size_limits_are_clear_errors():
    with pytest.raises(InvalidVenuePlan, match="at most 100000"):
        parse_grid("\n".join(f"Section S{i}: rows 1-200 x seats 1-300" for i in range(2)))
    with pytest.raises(InvalidVenuePlan, match="Line 1: a row has at most 500 seats"):
        parse_grid("Section S: rows 1-2 x seats 1-501")


@pytest.mark.django_db
def test_a_stadium_sized_plan_is_built_and_priced():
    from events.selectors import category_places, unpriced_places
    from events.services import AssignmentSpec
    from tests.events.factories import SMALL_HALL_PRICES, EventFactory

    stadium = "\n".join(f"Section S{i}: rows 1-40 x seats 1-50" for i in range(10))
    event = EventFactory(
        venue=VenueFactory(plan=stadium),
        prices=SMALL_HALL_PRICES[:2],
        assignments=[
            *(AssignmentSpec("A", f"S{i}", "1", "10") for i in range(10)),
            *(AssignmentSpec("B", f"S{i}", "11", "40") for i in range(10)),
        ],
    )
    places = category_places(event=event)
    assert (places["A"].count, places["B"].count) == (5_000, 15_000)
    assert unpriced_places(event=event) == []
