from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from events.errors import (
    EventNotEditable,
    EventNotFound,
    InvalidCategoryAssignment,
    InvalidEvent,
)
from events.models import CategoryAssignment, Event, EventStatus, PriceCategory
from events.rules import is_open, open_q
from events.selectors import category_places, unpriced_places
from events.services import (
    AssignmentSpec,
    PriceCategorySpec,
    assign_categories,
    cancel_event,
    create_event,
    put_event_on_sale,
)
from events.venues import create_venue
from tests.events.factories import SMALL_HALL_PRICES, EventFactory, VenueFactory

pytestmark = pytest.mark.django_db


def _draft(**kwargs):
    return EventFactory(assignments=(), publish=False, **kwargs)


def test_create_event_makes_a_draft_with_its_categories():
    venue = VenueFactory()
    starts = timezone.now() + timedelta(days=10)
    event = create_event(
        venue=venue,
        name="  Nils Frahm ",
        category="CONCERT",
        starts_at=starts,
        on_sale_at=starts - timedelta(days=5),
        price_categories=SMALL_HALL_PRICES,
    )
    assert event.status == EventStatus.DRAFT and event.name == "Nils Frahm"
    assert list(event.price_categories.values_list("code", "price")) == [
        ("A", Decimal("80.00")),
        ("B", Decimal("45.00")),
        ("GA", Decimal("30.00")),
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"category": "OPERA"}, "Unknown event category"),
        ({"starts_at": timezone.now() - timedelta(hours=1)}, "must start in the future"),
        ({"on_sale_at": timezone.now() + timedelta(days=11)}, "before the event starts"),
        ({"price_categories": ()}, "at least one price category"),
        (
            {"price_categories": (PriceCategorySpec("a", "x", Decimal(1)),)},
            "capital letters",
        ),
        (
            {"price_categories": (PriceCategorySpec("A", "x", Decimal(-1)),)},
            "cannot be negative",
        ),
        (
            {"price_categories": (PriceCategorySpec("A", "x", 1), PriceCategorySpec("A", "y", 2))},
            "its own code",
        ),
    ],
)
def test_create_event_refuses_bad_input(change, message):
    starts = timezone.now() + timedelta(days=10)
    fields = {
        "venue": VenueFactory(),
        "name": "Show",
        "category": "CONCERT",
        "starts_at": starts,
        "on_sale_at": starts - timedelta(days=5),
        "price_categories": SMALL_HALL_PRICES,
        **change,
    }
    with pytest.raises(InvalidEvent, match=message):
        create_event(**fields)
    assert not Event.objects.exists()


def test_create_event_needs_a_plan_and_refuses_a_duplicate():
    starts = timezone.now() + timedelta(days=10)
    bare = VenueFactory(plan="")
    fields = {
        "name": "Show",
        "category": "CONCERT",
        "starts_at": starts,
        "on_sale_at": starts - timedelta(days=1),
        "price_categories": SMALL_HALL_PRICES,
    }
    with pytest.raises(InvalidEvent, match="no seating plan"):
        create_event(venue=bare, **fields)
    venue = VenueFactory()
    create_event(venue=venue, **fields)
    with pytest.raises(InvalidEvent, match="already has an event"):
        create_event(venue=venue, **fields)


def test_create_venue_checks_the_time_zone():
    with pytest.raises(InvalidEvent, match="IANA"):
        create_venue(name="Hall", city="Berlin", time_zone="Mars/Olympus")
    assert create_venue(name="Hall", city="Berlin", time_zone="Europe/Berlin").pk


def test_assignments_price_every_seat_and_standing_area():
    event = EventFactory()
    places = category_places(event=event)
    assert places["A"].count == 12  # stalls rows 1-2, 6 seats each
    assert places["B"].count == 12 + 10  # stalls rows 3-4 and the balcony
    assert places["GA"].count == 50 and not places["GA"].seats
    assert unpriced_places(event=event) == []


def test_overlapping_or_unknown_rules_are_refused_and_nothing_changes():
    event = _draft()
    assign_categories(event_id=event.pk, assignments=[AssignmentSpec("A", "Stalls")])
    with pytest.raises(InvalidCategoryAssignment) as caught:
        assign_categories(
            event_id=event.pk,
            assignments=[
                AssignmentSpec("A", "Stalls", "1", "3"),
                AssignmentSpec("B", "stalls", "3", "4"),  # row 3 twice
                AssignmentSpec("Z", "Stalls"),
                AssignmentSpec("A", "Nowhere"),
                AssignmentSpec("A", "Balcony", "B", "A"),
                AssignmentSpec("A", "Balcony", "A", "Q"),
                AssignmentSpec("GA", "Floor", "1", "2"),
            ],
        )
    detail = caught.value.detail
    for expected in (
        "Rule 2 (B, stalls) overlaps rule 1",
        "Rule 3: the event has no price category 'Z'",
        "Rule 4: the venue has no section 'Nowhere'",
        "Rule 5: Balcony: row B is behind row A",
        "Rule 6: Balcony has no row 'Q'",
        "Rule 7: Floor is standing",
    ):
        assert expected in detail
    assert list(CategoryAssignment.objects.values_list("section__name", "first_row")) == [
        ("Stalls", "")
    ]


def test_on_sale_needs_every_place_priced():
    event = _draft()
    assign_categories(event_id=event.pk, assignments=[AssignmentSpec("A", "Stalls")])
    with pytest.raises(InvalidCategoryAssignment, match="10 seats in Balcony, standing area Floor"):
        put_event_on_sale(event_id=event.pk)
    assign_categories(
        event_id=event.pk,
        assignments=[
            AssignmentSpec("A", "Stalls"),
            AssignmentSpec("B", "Balcony"),
            AssignmentSpec("GA", "Floor"),
        ],
    )
    assert put_event_on_sale(event_id=event.pk).status == EventStatus.ON_SALE
    with pytest.raises(EventNotEditable):
        assign_categories(event_id=event.pk, assignments=[AssignmentSpec("A", "Stalls")])
    with pytest.raises(EventNotEditable):
        put_event_on_sale(event_id=event.pk)


def test_cancel_event_is_idempotent_and_final():
    event = EventFactory()
    assert cancel_event(event_id=event.pk).changed is True
    assert cancel_event(event_id=event.pk).changed is False
    event.refresh_from_db()
    assert event.status == EventStatus.CANCELLED and event.status_changed_at
    with pytest.raises(EventNotEditable):
        put_event_on_sale(event_id=event.pk)
    finished = EventFactory()
    Event.objects.filter(pk=finished.pk).update(status=EventStatus.FINISHED)
    with pytest.raises(EventNotEditable):
        cancel_event(event_id=finished.pk)
    with pytest.raises(EventNotFound):
        cancel_event(event_id=999_999)


def test_the_sale_is_open_between_on_sale_time_and_start():
    now = timezone.now()
    soon = EventFactory(on_sale_at=now + timedelta(hours=1))
    open_now = EventFactory()
    draft = _draft()
    assert not is_open(soon, now=now) and is_open(soon, now=now + timedelta(hours=1))
    assert is_open(open_now, now=now)
    assert not is_open(open_now, now=open_now.starts_at)
    assert not is_open(draft, now=now)
    assert list(Event.objects.filter(open_q(now=now))) == [open_now]


def test_database_constraints_on_events_and_categories():
    event = EventFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Event.objects.filter(pk=event.pk).update(on_sale_at=event.starts_at)
    for bad in ({"code": "a"}, {"price": Decimal("-1")}, {"colour": "red"}, {"currency": "eu"}):
        fields = {"event": event, "code": "Q", "name": "x", "price": 1, **bad}
        with pytest.raises(IntegrityError), transaction.atomic():
            PriceCategory.objects.create(**fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        CategoryAssignment.objects.create(
            category=event.price_categories.first(),
            section=event.venue.sections.first(),
            first_row="1",
        )
