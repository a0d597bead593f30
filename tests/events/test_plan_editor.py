"""The admin's seat-map editor saving (issue 29, item 5): the drawing is checked by the CSV
import's rules, saved all or nothing, and a plan on sale may grow, gain aisles, flags and
quality scores, but never lose (or renumber) a seat that is held or sold."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from bookings.customer_holds import hold_seats
from bookings.models import Inventory, Seat, SeatStatus
from events.errors import InvalidVenuePlan
from events.models import Section, SectionKind, VenueSeat
from events.plan_drawn import venue_drawing
from events.plan_parsing import parse_csv
from events.services import AssignmentSpec, PriceCategorySpec
from events.venues import save_drawn_plan
from tests.events.factories import EventFactory, VenueFactory
from tests.events.small_hall import HALL, PRICES, RULES
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def on_sale():
    return EventFactory(venue=VenueFactory(plan=HALL), prices=PRICES, assignments=RULES)


def seat(row, number, x, y, **flags):
    return {"row": row, "number": number, "x": x, "y": y, **flags}


def drawn(venue, change) -> str:
    drawing = venue_drawing(venue=venue)
    change(drawing["sections"])
    return json.dumps(drawing)


def engine(event) -> dict[str, Seat]:
    return {s.seat_no: s for s in Seat.objects.filter(sale_id=event.sale_id)}


def capacity(event, code="A") -> int:
    return Inventory.objects.get(sale_id=event.sale_id, fare_class=code).capacity


def plan_of(venue) -> list[tuple]:
    return sorted(
        VenueSeat.objects.filter(section__venue=venue).values_list(
            "section__name", "row", "number", "x", "y", "accessible", "restricted_view", "quality"
        )
    )


def test_a_drawing_becomes_the_plan_of_a_venue_without_events():
    venue = VenueFactory(plan=HALL)
    drawing = {
        "stage_side": "BOTTOM",
        "sections": [
            {
                "name": "Circle",
                "seats": [
                    seat("A", 1, 1, 1, accessible=True),
                    seat("A", 2, 2, 1),
                    seat("A", 3, 4, 2, restricted_view=True, quality=1.5),  # aisle, angled
                    seat("B", 1, 1, 3),
                ],
            }
        ],
    }
    plan = save_drawn_plan(venue=venue, drawing=json.dumps(drawing))
    assert plan.seat_count == 4
    venue.refresh_from_db()
    assert venue.stage_side == "BOTTOM"
    assert plan_of(venue) == [
        ("Circle", "A", 1, 1, 1, True, False, None),
        ("Circle", "A", 2, 2, 1, False, False, None),
        ("Circle", "A", 3, 4, 2, False, True, 1.5),
        ("Circle", "B", 1, 1, 3, False, False, None),
    ]
    # Standing areas stay, as with the CSV import; the drawn section replaced Stalls.
    kinds = dict(Section.objects.filter(venue=venue).values_list("name", "kind"))
    assert kinds == {"Floor": SectionKind.STANDING, "Circle": SectionKind.SEATED}


def test_the_drawing_is_checked_by_the_csv_rules_and_nothing_is_saved():
    venue = VenueFactory(plan=HALL)
    before = plan_of(venue)
    drawing = {
        "sections": [
            {
                "name": "Stalls",
                "seats": [
                    seat("1", 1, 1, 1),
                    seat("1", 1, 2, 1),  # the same seat twice
                    seat("1 2", 2, 3, 1),  # not a row label
                    seat("1", 3, 1, 1),  # on another seat's place
                    seat("1", 4, 5, 1, quality="NaN"),
                ],
            }
        ],
    }
    with pytest.raises(InvalidVenuePlan) as caught:
        save_drawn_plan(venue=venue, drawing=json.dumps(drawing))
    problems = caught.value.problems
    assert problems[0].startswith('Stalls seat 3: row "1 2" must be 1 to 8 letters')
    assert "must be a finite number" in problems[1]
    assert "Stalls seat 2: Stalls row 1 seat 1 is already on stalls seat 1." in problems
    assert "Stalls seat 4: Stalls position x=1, y=1 is already on stalls seat 1." in problems
    assert plan_of(venue) == before
    # One rule, one place: the CSV import refuses the same seats with the same words.
    with pytest.raises(InvalidVenuePlan) as csv_caught:
        parse_csv("section,row,number,x,y,accessible,restricted_view\nS,1,1,1,1,,\nS,1,1,2,1,,\n")
    assert csv_caught.value.problems == ["Line 3: S row 1 seat 1 is already on line 2."]


@pytest.mark.parametrize("text", ["not json", "[]", '{"sections": [{"seats": 3}]}'])
def test_a_drawing_that_cannot_be_read_is_refused(text):
    venue = VenueFactory(plan=HALL)
    with pytest.raises(InvalidVenuePlan):
        save_drawn_plan(venue=venue, drawing=text)


def test_on_sale_a_drawn_row_joins_the_sale_in_its_category():
    event = on_sale()
    assert capacity(event) == 8
    save_drawn_plan(
        venue=event.venue,
        drawing=drawn(
            event.venue, lambda s: s[0]["seats"].extend(seat("3", n, n, 3) for n in (1, 2, 3))
        ),
    )
    seats = engine(event)
    assert {"1-3-1", "1-3-2", "1-3-3"} <= set(seats)
    assert all(seats[f"1-3-{n}"].status == SeatStatus.AVAILABLE for n in (1, 2, 3))
    assert seats["1-3-2"].row_key == "1-3" and seats["1-3-2"].place == 2
    assert capacity(event) == 11
    booking = hold_seats(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=["1-3-2"]
    )
    assert booking.amount == Decimal("50.00")


def test_on_sale_an_aisle_flags_and_quality_reach_the_sale():
    event = on_sale()

    def aisle_after_seat_2(sections):
        for s in sections[0]["seats"]:
            if s["number"] > 2:
                s["x"] += 1  # the column after seat 2 left out: an aisle
            if (s["row"], s["number"]) == ("1", 1):
                s.update(accessible=True, quality=0.25)
            if (s["row"], s["number"]) == ("2", 4):
                s["restricted_view"] = True

    save_drawn_plan(venue=event.venue, drawing=drawn(event.venue, aisle_after_seat_2))
    seats = engine(event)
    assert [seats[f"1-1-{n}"].place for n in (1, 2, 3, 4)] == [1, 2, 4, 5]
    assert seats["1-1-1"].accessible and seats["1-1-1"].quality == 0.25
    assert seats["1-2-4"].restricted_view
    assert capacity(event) == 8
    # The aisle is an aisle for the engine too: 1-1-2 and 1-1-3 are no longer side by side.
    from bookings.adjacency import side_by_side

    assert not side_by_side(seats["1-1-2"], seats["1-1-3"])
    assert side_by_side(seats["1-1-3"], seats["1-1-4"])


@pytest.mark.parametrize("sell", [False, True], ids=["held", "sold"])
@pytest.mark.parametrize("how", ["removed", "renumbered"])
def test_on_sale_a_held_or_sold_seat_is_never_taken_out(sell, how):
    event = on_sale()
    booking = hold_seats(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-4"]
    )
    if sell:
        Seat.objects.filter(seat_no="1-1-4", sale_id=event.sale_id).update(
            status=SeatStatus.SOLD, held_until=None
        )
    before, engine_before = plan_of(event.venue), engine(event)

    def change(sections):
        seats = sections[0]["seats"]
        target = next(s for s in seats if (s["row"], s["number"]) == ("1", 4))
        if how == "removed":
            seats.remove(target)
        else:
            target["number"] = 9
        seats.append(seat("3", 1, 1, 3))  # with a safe change: refused all the same

    with pytest.raises(InvalidVenuePlan) as caught:
        save_drawn_plan(venue=event.venue, drawing=drawn(event.venue, change))
    state = "sold" if sell else "held"
    assert caught.value.problems == [
        f"Stalls row 1 seat 4 is {state} for {event.name}: a seat held or sold stays in the "
        "plan (not removed, not renumbered)."
    ]
    assert plan_of(event.venue) == before
    assert {k: (s.status, s.booking_id) for k, s in engine(event).items()} == {
        k: (s.status, s.booking_id) for k, s in engine_before.items()
    }
    assert engine(event)["1-1-4"].booking_id == booking.pk


def test_control_the_same_removal_of_a_free_seat_is_saved_and_the_seat_leaves_the_sale():
    event = on_sale()

    def remove(sections):
        sections[0]["seats"] = [s for s in sections[0]["seats"] if s["number"] != 4]

    save_drawn_plan(venue=event.venue, drawing=drawn(event.venue, remove))
    seats = engine(event)
    assert seats["1-1-4"].status == SeatStatus.BLOCKED and seats["1-2-4"].status == "BLOCKED"
    assert capacity(event) == 6
    assert not VenueSeat.objects.filter(section__venue=event.venue, number=4).exists()


def test_on_sale_a_new_section_no_category_prices_is_refused():
    event = on_sale()
    before = plan_of(event.venue)

    def add(sections):
        sections.append({"name": "Box", "seats": [seat("1", 1, 1, 1)]})

    with pytest.raises(InvalidVenuePlan) as caught:
        save_drawn_plan(venue=event.venue, drawing=drawn(event.venue, add))
    assert "no price category sells 1 seat in Box" in caught.value.problems[0]
    assert plan_of(event.venue) == before


def test_a_priced_section_cannot_be_removed_or_renamed():
    event = on_sale()

    def rename(sections):
        sections[0]["name"] = "Parterre"

    with pytest.raises(InvalidVenuePlan) as caught:
        save_drawn_plan(venue=event.venue, drawing=drawn(event.venue, rename))
    assert caught.value.problems == [
        'Section "Stalls" is priced by the venue\'s events: it cannot be removed or renamed.'
    ]


def test_the_grid_builder_still_refuses_any_rebuild_of_a_plan_in_use():
    from events.errors import VenuePlanInUse
    from events.venues import build_venue_plan_from_grid

    event = on_sale()
    with pytest.raises(VenuePlanInUse):
        build_venue_plan_from_grid(venue=event.venue, description=HALL)


def editor_url(venue) -> str:
    return f"/admin/events/venue/{venue.pk}/plan/draw/"


def test_the_admin_editor_opens_saves_and_refuses_with_a_400(client):
    from tests.factories import StaffFactory

    event = on_sale()
    client.force_login(StaffFactory())
    page = client.get(editor_url(event.venue))
    assert page.status_code == 200
    assert b'id="pe-drawing"' in page.content and b"plan-editor.js" in page.content
    grown = drawn(event.venue, lambda s: s[0]["seats"].append(seat("3", 1, 1, 3)))
    saved = client.post(editor_url(event.venue), {"drawing": grown})
    assert saved.status_code == 302 and saved["Location"].endswith(
        f"/events/venue/{event.venue_id}/change/"
    )
    assert "1-3-1" in engine(event)
    refused = client.post(editor_url(event.venue), {"drawing": '{"sections": []}'})
    assert refused.status_code == 400
    assert b"Nothing was saved" in refused.content
    assert "1-3-1" in engine(event)  # changed nothing


def test_the_editor_and_its_refusals_speak_german_and_russian(client):
    from tests.factories import StaffFactory

    event = on_sale()
    hold_seats(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-4"]
    )
    client.force_login(StaffFactory())
    gone = drawn(event.venue, lambda s: s[0]["seats"].pop(3))
    for language, title, refusal in [
        ("de", "Sitzplan zeichnen", "Ein reservierter oder verkaufter Platz bleibt im Plan"),
        ("ru", "Нарисовать схему зала", "Забронированное или проданное место остаётся в плане"),
    ]:
        page = client.get(editor_url(event.venue), HTTP_ACCEPT_LANGUAGE=language)
        assert title in page.content.decode()
        refused = client.post(
            editor_url(event.venue), {"drawing": gone}, HTTP_ACCEPT_LANGUAGE=language
        )
        assert refused.status_code == 400 and refusal in refused.content.decode()


def test_on_sale_a_seat_keeps_its_category_or_the_save_is_refused():
    """Rules price rows by their order front to back: drawing row 3 in front of row 2 puts
    row 2 inside "B: rows 3-4" (the later category wins an overlap), so its seats would move
    from A to B.  Refused, with the seat named."""
    rows = (AssignmentSpec("A", "Stalls", "1", "2"), AssignmentSpec("B", "Stalls", "3", "4"))
    prices = (*PRICES, PriceCategorySpec(code="B", name="Back", price=Decimal("30.00")))
    venue = VenueFactory(plan="Section Stalls: rows 1-4 x seats 1-2\nStanding Floor: capacity 5")
    event = EventFactory(venue=venue, prices=prices, assignments=(*rows, RULES[1]))
    before = plan_of(venue)

    def swap_rows_2_and_3(sections):
        for s in sections[0]["seats"]:
            s["y"] = {2: 3, 3: 2}.get(s["y"], s["y"])

    with pytest.raises(InvalidVenuePlan) as caught:
        save_drawn_plan(venue=venue, drawing=drawn(venue, swap_rows_2_and_3))
    assert caught.value.problems[0] == (
        f"Stalls row 2 seat 1 would move from category A to B in {event.name}."
    )
    assert plan_of(venue) == before


def test_the_admin_editor_refuses_a_save_over_a_plan_saved_since_it_opened(client):
    """Two tabs (or the editor and the API): the page carries the plan version it opened on,
    and a save made meanwhile is not saved over.  The control: the same post made on the
    current version is saved."""
    from tests.factories import StaffFactory

    event = on_sale()
    client.force_login(StaffFactory())
    opened_on = event.venue.plan_version
    assert f'name="plan_version" value="{opened_on}"' in client.get(editor_url(event.venue)).text
    save_drawn_plan(venue=event.venue, drawing=drawn(event.venue, lambda s: None))  # the other tab
    before = plan_of(event.venue)
    flagged = drawn(event.venue, lambda s: s[0]["seats"][0].update(accessible=True))

    stale = client.post(editor_url(event.venue), {"drawing": flagged, "plan_version": opened_on})

    assert stale.status_code == 400 and "was saved since this drawing was made" in stale.text
    assert f'name="plan_version" value="{opened_on}"' in stale.text  # still the one it opened on
    assert plan_of(event.venue) == before
    current = event.venue.plan_version
    saved = client.post(editor_url(event.venue), {"drawing": flagged, "plan_version": current})
    assert saved.status_code == 302
    assert engine(event)["1-1-1"].accessible
