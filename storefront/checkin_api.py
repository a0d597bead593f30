"""The gate's check-in scan over REST (staff only): a ticket code and the flight boarding or
the event letting people in, answered with the verdict."""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings import catalogue
from bookings.ticket_codes import is_plausible_code
from bookings.tickets import ScanOutcome, ScanResult, scan_ticket
from kernel.web.openapi import problems
from storefront.booking_serializers import DB_BIGINT_MAX, sale_named_by


class CheckinScanApi(APIView):
    """POST {"code", "flightId" | "eventId"} -> the verdict for the gate (staff only).

    Every verdict (valid, forged, revoked, already_used, wrong_flight, wrong_event,
    conditions_unconfirmed, ...) is a 200: the scan was answered.  Malformed requests and
    unknown flights or events are problem+json 4xx.
    """

    permission_classes = [IsAdminUser]

    class InputSerializer(serializers.Serializer):
        code = serializers.CharField(max_length=1000)
        flight_id = serializers.IntegerField(
            min_value=1, max_value=DB_BIGINT_MAX, required=False, help_text="The flight boarding."
        )
        event_id = serializers.IntegerField(
            min_value=1,
            max_value=DB_BIGINT_MAX,
            required=False,
            help_text="The event letting people in. Exactly one of `flightId` and `eventId`.",
        )

        seat_conditions_confirmed = serializers.BooleanField(
            default=False,
            help_text=(
                "The agent confirmed the seat's conditions with the passenger (a flight's exit "
                "row: 15 or older, able and willing to help) and boards them; recorded on the "
                "passenger. Without it, an exit-row passenger who never confirmed them answers "
                "`conditions_unconfirmed` and the ticket stays valid."
            ),
        )

        def validate_code(self, code: str) -> str:
            if not is_plausible_code(code):
                raise ValidationError(
                    gettext("Not a Seatkeeper ticket code (printable ASCII only).")
                )
            return code

        def validate(self, data: dict) -> dict:
            if ("flight_id" in data) == ("event_id" in data):
                raise ValidationError(
                    gettext("Give exactly one of flightId and eventId: the gate you are at.")
                )
            return data

    class TicketSerializer(serializers.Serializer):
        serial = serializers.CharField()
        booking_id = serializers.IntegerField()
        passenger_name = serializers.CharField()
        seat = serializers.SerializerMethodField()
        fare_class = serializers.CharField()
        status = serializers.CharField()
        used_at = serializers.DateTimeField(allow_null=True)

        def get_seat(self, ticket) -> str | None:
            return ticket.seat_no or None

        def to_representation(self, ticket):
            data = super().to_representation(ticket)
            owner = catalogue.owner_item(ticket.sale)
            if owner is not None:  # the ticket's flight (`flightId`) or event (`eventId`)
                data[f"{owner[0]}_id"] = owner[1].pk
            return data

    class OutputSerializer(serializers.Serializer):
        result = serializers.ChoiceField(choices=ScanOutcome.choices, source="outcome")
        message = serializers.CharField()
        ticket = serializers.SerializerMethodField()

        @extend_schema_field(serializers.DictField(allow_null=True))
        def get_ticket(self, result: ScanResult) -> dict | None:
            if result.ticket is None:
                return None
            return CheckinScanApi.TicketSerializer(result.ticket).data

    @extend_schema(
        operation_id="checkin_scan",
        request=InputSerializer,
        responses={200: OutputSerializer, **problems(400, 401, 403, 404)},
        tags=["check-in"],
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = scan_ticket(
            code=data.validated_data["code"],
            sale_id=sale_named_by(data.validated_data),
            scanned_by=request.user,
            conditions_confirmed=data.validated_data["seat_conditions_confirmed"],
        )
        return Response(self.OutputSerializer(result).data)
