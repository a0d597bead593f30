"""Best available over REST (issue 29): `POST /api/bookings/best-available` with `eventId`
(or `flightId`), the category and a quantity, no seat list.  Thin: the engine
(`bookings.best_available`) picks and holds; domain errors become problem details."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.views import APIView

from bookings import best_available, selectors
from bookings.models import Booking
from kernel.idempotency import IdempotentResult, clean_key, fingerprint, run_once
from kernel.web.fields import ClassCodeField
from kernel.web.headers import header
from kernel.web.idempotency import idempotent_response
from kernel.web.openapi import problems
from kernel.web.throttles import HoldsThrottle
from storefront.api import HOLD_IDEMPOTENCY_KEY, BookingListCreateApi
from storefront.booking_serializers import DB_BIGINT_MAX, BookingSerializer, sale_named_by
from waitroom.gate import require_admission


class BestAvailableSerializer(serializers.Serializer):
    event_id = serializers.IntegerField(
        min_value=1, max_value=DB_BIGINT_MAX, required=False, help_text="The event."
    )
    flight_id = serializers.IntegerField(
        min_value=1,
        max_value=DB_BIGINT_MAX,
        required=False,
        help_text="Or a flight (then `category` is the fare class).",
    )
    customer_id = serializers.IntegerField(
        min_value=1,
        max_value=DB_BIGINT_MAX,
        required=False,
        help_text="Defaults to you. Another customer only with the book-on-behalf permission.",
    )
    category = ClassCodeField(
        help_text="The price category of the seats (A); a flight's fare class."
    )
    quantity = serializers.IntegerField(min_value=1, max_value=50, help_text="How many seats.")
    accessible = serializers.IntegerField(
        min_value=0,
        max_value=50,
        default=0,
        help_text=(
            "How many of them are wheelchair places (accessible seats), the rest companion "
            'seats beside them: "2 wheelchair places and 2 companion seats" is quantity 4, '
            "accessible 2."
        ),
    )
    passenger_names = serializers.ListField(
        child=serializers.CharField(max_length=120, allow_blank=True),
        max_length=50,
        required=False,
        help_text="Optional; one per seat, in order.",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("flight_id" in data) == ("event_id" in data):
            name = "event_id" if "flight_id" in data else "flight_id"
            raise ValidationError({name: [gettext("Give either `flightId` or `eventId`.")]})
        data["category"] = data["category"].strip().upper()
        if data["accessible"] > data["quantity"]:
            raise ValidationError(
                {"accessible": [gettext("Wheelchair places are part of the seats asked for.")]}
            )
        return data


class BestAvailableApi(APIView):
    throttle_classes = [HoldsThrottle]

    @extend_schema(
        operation_id="bookings_best_available",
        tags=["bookings"],
        summary="Hold the best available seats",
        description=(
            "Holds the best `quantity` seats of `category` side by side in one row, with no "
            "aisle between, for the hold time (or nothing). Seats are ranked by the venue's "
            "quality score (staff-set, else the distance from the stage centre; a cabin's "
            "front rows first). The block never leaves a single free seat between a taken "
            "seat, an aisle or a row end and itself, unless no other block fits. Send an "
            "`Idempotency-Key` to retry safely, as for `POST /api/bookings`."
        ),
        request=BestAvailableSerializer,
        parameters=[HOLD_IDEMPOTENCY_KEY],
        responses={
            201: BookingSerializer,
            **problems(
                400,
                401,
                403,
                404,
                409,
                429,
                503,
                s400="Invalid body (`invalid-request`), or a category the sale does not sell "
                "(`class-not-sold`).",
                s403="`customerId` names someone else and you may not book on their behalf, "
                "or the sale is behind a waiting room (`waiting-room-required`).",
                s404="No such event or flight (or the event is not on sale).",
                s409="No block of that many seats side by side is free (`no-adjacent-seats`); "
                "the category is sold out (`sold-out`) or the sale is closed "
                "(`sale-not-bookable`).",
                s503="Too busy: retry after `Retry-After` seconds.",
            ),
        },
        examples=[
            OpenApiExample(
                "Two wheelchair places and two companions",
                value={"eventId": 7, "category": "A", "quantity": 4, "accessible": 2},
                request_only=True,
            )
        ],
    )
    def post(self, request):
        data = BestAvailableSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        data = data.validated_data
        customer = BookingListCreateApi._customer(request.user, data.get("customer_id"))
        sale_id = sale_named_by(data)
        require_admission(request=request, customer_id=customer.pk, sale_id=sale_id)

        def hold() -> Booking:
            return best_available.hold_best_available(
                customer=customer,
                sale_id=sale_id,
                fare_class=data["category"],
                quantity=data["quantity"],
                accessible=data["accessible"],
                passenger_names=data.get("passenger_names"),
            )

        def answer(booking: Booking) -> tuple[int, dict[str, Any]]:
            booking = selectors.booking_just_written(booking=booking)
            return 201, BookingSerializer(booking).data

        key = clean_key(header(request, "Idempotency-Key"), required=False, what="hold")
        if key is None:
            result = IdempotentResult(*answer(hold()))
        else:
            result = run_once(
                sale_id=sale_id,
                customer=request.user,
                scope="api-best-available",
                key=key,
                request_fingerprint=fingerprint({**data, "customer_id": customer.pk}),
                write=hold,
                answer=answer,
                what="hold",
            )
        location = reverse("bookings_api:detail", args=[result.body["booking_id"]])
        return idempotent_response(result, headers={"Location": location})
