"""Public flight reads: search, one flight, the seat map.  Thin: validate, call a selector."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings.errors import FlightNotFound
from config.api.openapi import problems
from flights import selectors
from flights.models import FareClass, FlightStatus, SeatStatus

IATA = r"^[A-Za-z]{3}$"


class FlightSearchQuerySerializer(serializers.Serializer):
    # "from" is a Python keyword, so the fields are declared here rather than as attributes.
    def get_fields(self):
        return {
            "from": serializers.RegexField(IATA, help_text="Origin IATA code, e.g. SGN."),
            "to": serializers.RegexField(IATA, help_text="Destination IATA code, e.g. HAN."),
            "date": serializers.DateField(
                input_formats=["iso-8601"],
                help_text="Departure date (YYYY-MM-DD) in the origin airport's local time.",
            ),
        }


class AirportSerializer(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    city = serializers.CharField()
    country = serializers.CharField()
    time_zone = serializers.CharField(help_text="IANA time zone.")


class FareSerializer(serializers.Serializer):
    fare_class = serializers.ChoiceField(choices=FareClass.choices)
    price = serializers.DecimalField(max_digits=12, decimal_places=2, help_text="Per passenger.")
    currency = serializers.CharField()
    available = serializers.IntegerField(help_text="Units left; may be a few seconds stale.")


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


class SeatSerializer(serializers.Serializer):
    seat_no = serializers.CharField()
    row = serializers.IntegerField()
    letter = serializers.CharField()
    fare_class = serializers.ChoiceField(choices=FareClass.choices)
    status = serializers.ChoiceField(choices=SeatStatus.choices)
    surcharge = serializers.DecimalField(max_digits=10, decimal_places=2)


class SeatMapSerializer(serializers.Serializer):
    flight_id = serializers.IntegerField()
    code = serializers.CharField()
    status = serializers.ChoiceField(choices=FlightStatus.choices)
    generated_at = serializers.DateTimeField(help_text="When this (cached) map was read.")
    fares = FareSerializer(many=True)
    seats = SeatSerializer(many=True)


class PublicReadApi(APIView):
    permission_classes = [AllowAny]


class FlightSearchApi(PublicReadApi):
    @extend_schema(
        operation_id="flights_search",
        tags=["flights"],
        summary="Search flights",
        description="Cached for a short while: availability may be slightly stale.",
        parameters=[FlightSearchQuerySerializer],
        responses={200: FlightSerializer(many=True), **problems(400, 401)},
    )
    def get(self, request):
        query = FlightSearchQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        flights = selectors.search_flights(
            origin=query.validated_data["from"],
            destination=query.validated_data["to"],
            day=query.validated_data["date"],
        )
        return Response(FlightSerializer(flights, many=True).data)


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
            raise FlightNotFound(f"There is no flight {flight_id}.")
        return Response(FlightSerializer(flight).data)


class SeatMapApi(PublicReadApi):
    @extend_schema(
        operation_id="flights_seats",
        tags=["flights"],
        summary="Seat map",
        description=(
            "Cached for a few seconds, so a seat shown AVAILABLE may already be taken; holding "
            "it then answers 409. Holds always check the database."
        ),
        responses={200: SeatMapSerializer, **problems(401, 404)},
    )
    def get(self, request, flight_id: int):
        seats = selectors.seat_map(flight_id=flight_id)
        if seats is None:
            raise FlightNotFound(f"There is no flight {flight_id}.")
        return Response(SeatMapSerializer(seats).data)
