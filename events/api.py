"""Public event reads: search, one event, its live seat map.  Thin: validate, call a selector.

The seat map is the flash sale's hot read: the selector hands back finished JSON bytes and an
ETag; a matching `If-None-Match` gets 304 without a body (as the flights' seat map)."""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from bookings.models import SeatStatus
from events import seat_map, selectors
from events.errors import EventNotFound
from events.models import EventCategory, EventStatus, SectionKind, StageSide
from kernel.web.lean import PublicReadApi
from kernel.web.openapi import problems
from kernel.web.pagination import PAGE_PARAMETERS, page_links, page_of
from kernel.web.renderers import cached_json_response, camel_json, etag_known_to
from waitroom.room_api import WaitingRoomSummarySerializer


@extend_schema_field(OpenApiTypes.DATETIME)
class LocalDateTimeField(serializers.Field):
    """An aware datetime written with its own UTC offset (the venue's wall clock)."""

    def to_representation(self, value):
        return value.isoformat()


class EventSearchQuerySerializer(serializers.Serializer):
    city = serializers.CharField(
        required=False, allow_blank=True, max_length=80, help_text="Venue city, any case."
    )
    date = serializers.DateField(
        required=False,
        input_formats=["iso-8601"],
        help_text="Day of the event (YYYY-MM-DD) in the venue's local time.",
    )
    category = serializers.ChoiceField(
        choices=EventCategory.choices, required=False, help_text="Kind of event."
    )


class VenueSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    city = serializers.CharField()
    address = serializers.CharField()
    time_zone = serializers.CharField(help_text="IANA time zone.")
    stage_side = serializers.ChoiceField(choices=StageSide.choices)


class PriceSerializer(serializers.Serializer):
    price = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()


class PriceCategorySerializer(serializers.Serializer):
    code = serializers.CharField(help_text="What bookings name the category by, e.g. A.")
    name = serializers.CharField()
    price = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="Per ticket.")
    currency = serializers.CharField()
    colour = serializers.CharField(help_text="Hex colour on the seat plan.")


class PricedCategorySerializer(PriceCategorySerializer):
    places = serializers.IntegerField(help_text="Seats plus standing places it sells.")
    standing_areas = serializers.ListField(
        child=serializers.CharField(),
        help_text=(
            "The `fareClass` to hold this category's standing places by (with `passengers`), "
            'e.g. ["GA-3"]: the category code itself (GA) books its seats only. Empty for a '
            "seated category."
        ),
    )


class EventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    category = serializers.ChoiceField(choices=EventCategory.choices)
    status = serializers.ChoiceField(choices=EventStatus.choices)
    starts_at = serializers.DateTimeField(help_text="UTC.")
    starts_local = LocalDateTimeField(help_text="ISO 8601 in the venue's time zone.")
    on_sale_at = serializers.DateTimeField(help_text="UTC: when tickets can first be bought.")
    sale_open = serializers.BooleanField(help_text="Tickets can be bought now.")
    venue = VenueSerializer()
    price_from = PriceSerializer(allow_null=True, help_text="The cheapest category.")
    price_categories = PriceCategorySerializer(many=True)
    waiting_room = WaitingRoomSummarySerializer(
        allow_null=True,
        help_text="The waiting room in front of this event's sale, or null when there is "
        "none: holds on it then need its admission token (`X-Waiting-Room-Token`).",
    )


class SectionSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=SectionKind.choices)
    places = serializers.IntegerField(help_text="Seats, or a standing area's capacity.")
    categories = serializers.ListField(child=serializers.CharField())
    accessible = serializers.IntegerField(help_text="Accessible seats.")
    restricted_view = serializers.IntegerField(help_text="Seats with a restricted view.")


class EventDetailSerializer(EventSerializer):
    description = serializers.CharField()
    price_categories = PricedCategorySerializer(many=True)
    sections = SectionSerializer(many=True)


class SaleCategorySerializer(PriceCategorySerializer):
    available = serializers.IntegerField(
        help_text="Seats and standing places left; may be a few seconds stale."
    )


class EventSeatSerializer(serializers.Serializer):
    seat_no = serializers.CharField(help_text="What a booking names the seat by, e.g. 2-F-12.")
    section = serializers.CharField()
    row = serializers.CharField(help_text="The row as printed on the ticket.")
    number = serializers.IntegerField()
    x = serializers.IntegerField(allow_null=True, help_text="Column in its section's grid.")
    y = serializers.IntegerField(allow_null=True, help_text="Line in its section's grid.")
    category = serializers.CharField(help_text="Price category code (the booking's fareClass).")
    category_name = serializers.CharField()
    colour = serializers.CharField()
    price = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    accessible = serializers.BooleanField()
    restricted_view = serializers.BooleanField()
    status = serializers.ChoiceField(choices=SeatStatus.choices)


class StandingAreaSerializer(serializers.Serializer):
    fare_class = serializers.CharField(
        help_text="What a booking names the area by (fareClass, with `passengers`), e.g. GA-3."
    )
    section = serializers.CharField()
    category = serializers.CharField(allow_null=True)
    category_name = serializers.CharField()
    colour = serializers.CharField()
    price = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    capacity = serializers.IntegerField()
    available = serializers.IntegerField(help_text="Places left; may be a few seconds stale.")


class EventSeatMapSerializer(serializers.Serializer):
    event_id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=EventStatus.choices)
    sale_open = serializers.BooleanField(help_text="Tickets can be bought now.")
    stage_side = serializers.ChoiceField(choices=StageSide.choices)
    generated_at = serializers.DateTimeField(help_text="When this (cached) map was read.")
    categories = SaleCategorySerializer(many=True)
    seats = EventSeatSerializer(many=True)
    standing_areas = StandingAreaSerializer(many=True)


class EventSearchApi(PublicReadApi):
    @extend_schema(
        operation_id="events_search",
        tags=["events"],
        summary="Search events",
        description=(
            "Published events still to come, soonest first. Every filter is optional. Paged "
            "with `limit` (default 50, at most 200) and `offset`: the `Link` header has "
            '`rel="next"` while more follow (the body stays a plain array).'
        ),
        parameters=[EventSearchQuerySerializer, *PAGE_PARAMETERS],
        responses={200: EventSerializer(many=True), **problems(400, 401)},
    )
    def get(self, request):
        # A plain dict, not the QueryDict: DRF reads an empty value in a QueryDict as "not
        # sent" for optional fields, so `date=` would list every day although the schema
        # (format: date) calls it invalid.
        query = EventSearchQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        page = page_of(request.query_params)
        found, has_more = selectors.search_events_page(
            city=query.validated_data.get("city", ""),
            day=query.validated_data.get("date"),
            category=query.validated_data.get("category", ""),
            offset=page.offset,
            limit=page.limit,
        )
        links = page_links(request, page=page, has_more=has_more)
        return Response(EventSerializer(found, many=True).data, headers=links)


class EventDetailApi(PublicReadApi):
    @extend_schema(
        operation_id="events_retrieve",
        tags=["events"],
        summary="One event with its price categories and sections",
        responses={200: EventDetailSerializer, **problems(401, 404)},
    )
    def get(self, request, event_id: int):
        event = selectors.event_detail(event_id=event_id)
        if event is None:
            raise EventNotFound(gettext("There is no event %(id)s.") % {"id": event_id})
        return Response(EventDetailSerializer(event).data)


class EventSeatMapApi(PublicReadApi):
    @extend_schema(
        operation_id="events_seats",
        tags=["events"],
        summary="Live seat map of an event",
        description=(
            "Every seat with its section, row, number, place on the plan, price category and "
            "status, and each standing area with the places left. Cached for a few seconds, "
            "so a seat shown AVAILABLE may already be taken; holding it then answers 409. "
            "The `ETag` changes with every seat change; send it back as `If-None-Match` to "
            "get 304 while nothing changed."
        ),
        responses={200: EventSeatMapSerializer, 304: None, **problems(401, 404)},
    )
    def get(self, request, event_id: int):
        found = seat_map.seat_map_json(
            event_id=event_id,
            render=lambda data: camel_json(EventSeatMapSerializer(data).data),
            known=etag_known_to(request),
        )
        if found is None:
            raise EventNotFound(gettext("There is no event %(id)s.") % {"id": event_id})
        return cached_json_response(request, body=found.body, etag=found.etag)
