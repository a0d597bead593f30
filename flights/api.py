"""Public flight reads: search, one flight, the seat map.  Thin: validate, call a selector.

Search and the seat map are the flash sale's hot reads: the selector hands back the finished
JSON bytes (rendered once with the serializers below) and an ETag; a matching
`If-None-Match` gets 304 without a body.
"""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from bookings.errors import SaleNotFound
from flights import selectors
from flights.models import FareClass, FlightStatus, SeatStatus
from flights.search_input import FlightSearchQuerySerializer, search_request
from kernel.web.lean import PublicReadApi
from kernel.web.openapi import problems
from kernel.web.pagination import PAGE_PARAMETERS, page_links
from kernel.web.renderers import (
    cached_json_response,
    camel_json,
    etag_known_to,
)
from waitroom.room_api import WaitingRoomSummarySerializer

LOCALISED = " in the request's language (`Accept-Language`: en, de, ru; `Content-Language` \
says which), English where the airport has no name in it."


class AirportSerializer(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField(help_text="The airport's name" + LOCALISED)
    city = serializers.CharField(help_text="The city" + LOCALISED)
    country = serializers.CharField()
    time_zone = serializers.CharField(help_text="IANA time zone.")


class BookingClassSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="What a hold names as `bookingClass`.")
    name = serializers.CharField()
    price = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="Per passenger.")
    available = serializers.IntegerField(
        help_text="Units this class can still sell: the smallest room of its nested limits "
        "and the fare class; 0 is closed. May be a few seconds stale."
    )


class CheapestOpenSerializer(serializers.Serializer):
    booking_class = serializers.CharField(help_text="Blank: the fare class's own.")
    price = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="Per passenger.")
    available = serializers.IntegerField()


class FareSerializer(serializers.Serializer):
    fare_class = serializers.ChoiceField(choices=FareClass.choices)
    price = serializers.DecimalField(
        max_digits=12, decimal_places=2, help_text="Per passenger, the fare class's own class."
    )
    currency = serializers.CharField()
    available = serializers.IntegerField(help_text="Units left; may be a few seconds stale.")
    booking_classes = BookingClassSerializer(
        many=True,
        help_text="Booking classes nested in the fare class, cheapest first (may be empty).",
    )
    cheapest_open = CheapestOpenSerializer(
        allow_null=True, help_text="The cheapest class with a unit left; null: sold out."
    )


class FlightSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.CharField()
    status = serializers.ChoiceField(choices=FlightStatus.choices)
    origin = AirportSerializer()
    destination = AirportSerializer()
    departure_at = serializers.DateTimeField(help_text="UTC.")
    arrival_at = serializers.DateTimeField(help_text="UTC.")
    departure_local = serializers.CharField(help_text="ISO 8601 in the origin's time zone.")
    arrival_local = serializers.CharField(help_text="ISO 8601 in the destination's time zone.")
    fares = FareSerializer(many=True)
    waiting_room = WaitingRoomSummarySerializer(
        allow_null=True,
        help_text="The waiting room in front of this flight's sale, or null when there is "
        "none: holds on it then need its admission token (`X-Waiting-Room-Token`).",
    )


class SeatSerializer(serializers.Serializer):
    seat_no = serializers.CharField()
    row = serializers.IntegerField()
    letter = serializers.CharField()
    fare_class = serializers.ChoiceField(choices=FareClass.choices)
    status = serializers.ChoiceField(choices=SeatStatus.choices)
    surcharge = serializers.DecimalField(max_digits=10, decimal_places=2)
    exit_row = serializers.BooleanField(
        help_text=(
            "In an emergency exit row: its passenger confirms the exit-row conditions before "
            "check-in (`exitRowConfirmed: true` with the hold, later, or at check-in)."
        )
    )


class SeatMapSerializer(serializers.Serializer):
    flight_id = serializers.IntegerField()
    code = serializers.CharField()
    status = serializers.ChoiceField(choices=FlightStatus.choices)
    generated_at = serializers.DateTimeField(help_text="When this (cached) map was read.")
    fares = FareSerializer(many=True)
    seats = SeatSerializer(many=True)


class FlightSearchApi(PublicReadApi):
    @extend_schema(
        operation_id="flights_search",
        tags=["flights"],
        summary="Search flights",
        description=(
            "Cached for a short while: availability may be slightly stale. Carries an `ETag`; "
            "`If-None-Match` gets 304 while the cached answer is unchanged. Paged with "
            "`limit` (default 50, at most 200) and `offset`: the `Link` header has "
            '`rel="next"` while more follow (the body stays a plain array).'
        ),
        parameters=[FlightSearchQuerySerializer, *PAGE_PARAMETERS],
        responses={200: FlightSerializer(many=True), 304: None, **problems(400, 401)},
    )
    def get(self, request):
        query, page = search_request(request)  # flights/search_input.py: quick paths
        found, has_more = selectors.search_flights_json(
            origin=query["from"],
            destination=query["to"],
            day=query["date"],
            render=lambda flights: camel_json(FlightSerializer(flights, many=True).data),
            offset=page.offset,
            limit=page.limit,
            known=etag_known_to(request),
        )
        response = cached_json_response(request, body=found.body, etag=found.etag)
        for name, value in page_links(request, page=page, has_more=has_more).items():
            response[name] = value
        return response


class FlightDetailApi(PublicReadApi):
    @extend_schema(
        operation_id="flights_retrieve",
        tags=["flights"],
        summary="One flight with its fares",
        responses={200: FlightSerializer, **problems(401, 404)},
    )
    def get(self, request, flight_id: int):
        flight = selectors.flight_detail(flight_id=flight_id)
        if flight is None:
            raise SaleNotFound(gettext("There is no flight %(id)s.") % {"id": flight_id})
        return Response(FlightSerializer(flight).data)


class SeatMapApi(PublicReadApi):
    @extend_schema(
        operation_id="flights_seats",
        tags=["flights"],
        summary="Seat map",
        description=(
            "Cached for a few seconds, so a seat shown AVAILABLE may already be taken; holding "
            "it then answers 409. Holds always check the database. The `ETag` changes with "
            "every seat change (the live seat map's version); send it back as `If-None-Match` "
            "to get 304 while nothing changed."
        ),
        responses={200: SeatMapSerializer, 304: None, **problems(401, 404)},
    )
    def get(self, request, flight_id: int):
        found = selectors.seat_map_json(
            flight_id=flight_id,
            render=lambda seats: camel_json(SeatMapSerializer(seats).data),
            known=etag_known_to(request),
        )
        if found is None:
            raise SaleNotFound(gettext("There is no flight %(id)s.") % {"id": flight_id})
        return cached_json_response(request, body=found.body, etag=found.etag)
