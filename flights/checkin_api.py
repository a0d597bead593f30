"""Online check-in over the API (not the gate's boarding scan, `/api/checkin/scan`): thin,
validate and call `flights.online_checkin.check_in_online`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from flights.online_checkin import check_in_online
from kernel.web.openapi import problems


class SeatChoiceSerializer(serializers.Serializer):
    passenger_id = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    seat_no = serializers.RegexField(
        r"^[0-9]{1,3}[A-Za-z]$", max_length=4, help_text="A cabin seat, e.g. 14C."
    )


class OnlineCheckInInputSerializer(serializers.Serializer):
    # A ListField, not `many=True`: its max_length is a validator, which drf-spectacular
    # documents as `maxItems` (a ListSerializer's limit is checked but left out of the schema).
    seats = serializers.ListField(
        child=SeatChoiceSerializer(),
        required=False,
        max_length=9,
        help_text="Seats chosen per passenger; passengers left out keep theirs or get one "
        "assigned (a party together, outside exit rows unless confirmed).",
    )
    exit_row_confirmed = serializers.BooleanField(
        default=False,
        help_text=(
            "The customer confirms the exit-row conditions for every passenger checked in "
            "(recorded on them). Needed when a passenger sits in, or chooses, an exit-row seat "
            "whose conditions were not confirmed before (at the hold or with `PUT "
            "/api/bookings/{bookingId}/passengers`; a seat change needs it again)."
        ),
    )

    def validate_seats(self, seats: list[dict]) -> list[dict]:
        if len({s["passenger_id"] for s in seats}) != len(seats):
            raise serializers.ValidationError("One seat per passenger.")
        return seats


class CheckedInPassengerSerializer(serializers.Serializer):
    passenger_id = serializers.IntegerField()
    seat_no = serializers.CharField(help_text="Empty: the seat is assigned at the gate.")


class OnlineCheckInSerializer(serializers.Serializer):
    booking_id = serializers.IntegerField()
    passengers = CheckedInPassengerSerializer(many=True)


class OnlineCheckInApi(APIView):
    @extend_schema(
        operation_id="bookings_online_check_in",
        tags=["bookings"],
        summary="Check a confirmed flight booking in online",
        description=(
            "Open from 24 h before departure to the 45-minute cut-off (a flight may set its "
            "own times); outside it, 409 `online-check-in-closed`. A chosen seat already taken "
            "answers 409 and checks nobody in."
        ),
        request=OnlineCheckInInputSerializer,
        responses={
            200: OnlineCheckInSerializer,
            **problems(
                400,
                401,
                404,
                409,
                422,
                503,
                s422="A passenger in an exit-row seat (theirs or chosen) whose conditions "
                "are not confirmed, and no `exitRowConfirmed: true` (`exit-row-not-confirmed`, "
                "with `seats`; nobody is checked in, no seat moves).",
            ),
        },
    )
    def post(self, request, booking_id: int):
        data = OnlineCheckInInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = check_in_online(
            customer=request.user,
            booking_id=booking_id,
            seat_choices={
                s["passenger_id"]: s["seat_no"] for s in data.validated_data.get("seats", [])
            },
            exit_row_confirmed=data.validated_data["exit_row_confirmed"],
        )
        return Response(
            OnlineCheckInSerializer(
                {
                    "booking_id": result.booking_id,
                    "passengers": [
                        {"passenger_id": pk, "seat_no": seat}
                        for pk, seat in sorted(result.seats.items())
                    ],
                }
            ).data
        )
