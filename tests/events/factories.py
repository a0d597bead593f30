"""Factories for the events catalogue, built through the services the application uses, so a
test venue has a real plan and a test event real price categories and assignments."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import factory
from django.utils import timezone

from events.models import Event, EventCategory, Venue
from events.services import (
    AssignmentSpec,
    PriceCategorySpec,
    assign_categories,
    create_event,
    put_event_on_sale,
    set_single_seat_rule,
)
from events.venues import build_venue_plan_from_grid

SMALL_HALL = """
stage: top
Section Stalls: rows 1-4 x seats 1-6; aisle after 3; accessible: row 4 seats 1-2
Section Balcony: rows A-B x seats 1-5; restricted: row B seats 1, 5
Standing Floor: capacity 50
"""

SMALL_HALL_PRICES = (
    PriceCategorySpec(code="A", name="Front stalls", price=Decimal("80.00"), colour="#b91c1c"),
    PriceCategorySpec(code="B", name="Back stalls and balcony", price=Decimal("45.00")),
    PriceCategorySpec(code="GA", name="Standing", price=Decimal("30.00"), colour="#15803d"),
)

SMALL_HALL_ASSIGNMENTS = (
    AssignmentSpec("A", "Stalls", "1", "2"),
    AssignmentSpec("B", "Stalls", "3", "4"),
    AssignmentSpec("B", "Balcony"),
    AssignmentSpec("GA", "Floor"),
)


class VenueFactory(factory.django.DjangoModelFactory):
    """A venue with the SMALL_HALL plan: 24 stalls seats, 10 balcony seats, 50 standing."""

    class Meta:
        model = Venue

    name = factory.Sequence(lambda n: f"Hall {n}")
    city = "Berlin"
    address = "Musterstraße 1"
    time_zone = "Europe/Berlin"
    plan = SMALL_HALL

    @classmethod
    def _create(cls, model_class, *args, plan=SMALL_HALL, **kwargs):
        venue = model_class.objects.create(**kwargs)
        if plan:
            build_venue_plan_from_grid(venue=venue, description=plan)
        return venue


class EventFactory(factory.django.DjangoModelFactory):
    """A published concert in 30 days whose sale opened yesterday, every place priced.

    Its sale does not keep the single-seat rule (issue 29) unless `single_seat_rule=True`:
    the application's events keep it, as staff may switch it off; tests written before the
    rule pick seats freely, and the rule's own tests switch it on."""

    class Meta:
        model = Event

    name = factory.Sequence(lambda n: f"Concert {n}")
    venue = factory.SubFactory(VenueFactory)
    category = EventCategory.CONCERT
    starts_at = factory.LazyFunction(lambda: timezone.now() + timedelta(days=30))
    on_sale_at = factory.LazyFunction(lambda: timezone.now() - timedelta(days=1))
    description = "An evening of music."

    @classmethod
    def _create(
        cls,
        model_class,
        *args,
        prices=SMALL_HALL_PRICES,
        assignments=SMALL_HALL_ASSIGNMENTS,
        publish=True,
        single_seat_rule=False,
        **kwargs,
    ):
        event = create_event(price_categories=prices, **kwargs)
        if assignments:
            assign_categories(event_id=event.pk, assignments=assignments)
        if publish:
            put_event_on_sale(event_id=event.pk)
            set_single_seat_rule(event_id=event.pk, keep=single_seat_rule)
        event.refresh_from_db()
        return event
