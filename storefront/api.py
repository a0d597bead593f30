"""Bookings over REST: hold seats, list and read your bookings, cancel.

Thin on purpose: input serializers check shapes and types, the engine
(`bookings.customer_holds`, `bookings.passengers`) decides, domain errors become problem
details in `config.api.exceptions`.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings import catalogue, customer_holds, passengers, selectors
from bookings.models import Booking, BookingStatus, SaleKind
from bookings.ticket_codes import is_plausible_code
from bookings.tickets import ScanOutcome, ScanResult, scan_ticket
from kernel.idempotency import IdempotentResult, clean_key, fingerprint, run_once
from kernel.web.idempotency import idempotency_key_parameter, idempotent_response
from kernel.web.openapi import problems
from kernel.web.throttles import HoldsThrottle
from payments.api import RefundQuoteSerializer
from payments.cancellation import cancel_booking
from payments.models import RefundReason, RefundStatus
from waitroom.gate import TOKEN_HEADER, require_admission

DB_BIGINT_MAX = 2**63 - 1


# --- serializers -------------------------------------------------------------------------------


def sale_named_by(data: dict[str, Any]) -> int:
    """The engine's sale behind a request's `eventId` or `flightId` (its serializer let exactly
    one through); the catalogue's 404 if there is none."""
    if "event_id" in data:
        return selectors.sale_id_of(SaleKind.EVENT, data["event_id"])
    return selectors.sale_id_of(SaleKind.FLIGHT, data["flight_id"])


class BookingCreateSerializer(serializers.Serializer):
    """What to hold: on a flight (`flightId`, `fareClass`) or at an event (`eventId`, the
    price category as `category` or `fareClass`), exactly one of the two."""

    flight_id = serializers.IntegerField(
        min_value=1,
        max_value=DB_BIGINT_MAX,
        required=False,
        help_text="The flight to book. Either this or `eventId`.",
    )
    event_id = serializers.IntegerField(
        min_value=1,
        max_value=DB_BIGINT_MAX,
        required=False,
        help_text="The event to book. Either this or `flightId`.",
    )
    customer_id = serializers.IntegerField(
        min_value=1,
        max_value=DB_BIGINT_MAX,
        required=False,
        help_text="Defaults to you. Another customer only with the book-on-behalf permission.",
    )
    fare_class = serializers.CharField(
        max_length=10,
        required=False,
        help_text=(
            "Flights: the fare class (ECONOMY, BUSINESS). Events: the price category of the "
            "seats (A), or a standing area (GA-3, with `passengers`), as "
            "`GET /api/events/{id}/seats` names them."
        ),
    )
    category = serializers.CharField(
        max_length=10, required=False, help_text="Events: the same as `fareClass`."
    )
    seats = serializers.ListField(
        child=serializers.CharField(max_length=16),
        min_length=1,
        max_length=50,
        required=False,
        help_text='Seat numbers, e.g. ["12A", "12B"]. Either this or `passengers`.',
    )
    passengers = serializers.IntegerField(
        min_value=1,
        max_value=50,
        required=False,
        help_text="Seatless booking: how many passengers (seats are assigned later).",
    )
    passenger_names = serializers.ListField(
        child=serializers.CharField(max_length=120, allow_blank=True),
        max_length=50,
        required=False,
        help_text="Optional; one per seat or passenger, in order.",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("flight_id" in data) == ("event_id" in data):
            name = "event_id" if "flight_id" in data else "flight_id"
            raise ValidationError({name: [gettext("Give either `flightId` or `eventId`.")]})
        if "flight_id" in data:
            if "category" in data:
                raise ValidationError({"category": [gettext("Flights are booked by `fareClass`.")]})
            fare_class = data.get("fare_class")
            flight_classes = catalogue.for_kind(SaleKind.FLIGHT).class_codes or ()
            if fare_class is None:
                raise ValidationError({"fare_class": [gettext("This field is required.")]})
            if fare_class not in flight_classes:
                raise ValidationError(
                    {
                        "fare_class": [
                            gettext('"%(value)s" is not a valid choice.') % {"value": fare_class}
                        ]
                    }
                )
        else:
            given = {data[k] for k in ("fare_class", "category") if k in data}
            if len(given) != 1:
                raise ValidationError(
                    {"category": [gettext("Give the price category (`category` or `fareClass`).")]}
                )
            data["fare_class"] = given.pop().strip().upper()
        if "seats" in data and "passengers" in data:
            raise ValidationError(
                {"seats": [gettext("Give either `seats` or `passengers`, not both.")]}
            )
        if "seats" not in data and "passengers" not in data:
            raise ValidationError(
                {"seats": [gettext("Give `seats`, or `passengers` for a seatless fare.")]}
            )
        return data


class PassengerSerializer(serializers.Serializer):
    name = serializers.CharField(source="full_name")
    seat = serializers.CharField(source="seat.seat_no", allow_null=True, default=None)


class BookingSerializer(serializers.Serializer):
    booking_id = serializers.IntegerField(source="pk")
    status = serializers.ChoiceField(choices=BookingStatus.choices)
    customer_id = serializers.IntegerField()
    flight_id = serializers.IntegerField(
        required=False, help_text="Flight bookings only (an event booking has `eventId`)."
    )
    flight_code = serializers.CharField(required=False, help_text="Flight bookings only.")
    event_id = serializers.IntegerField(required=False, help_text="Event bookings only.")
    fare_class = serializers.CharField(
        help_text="The fare class (flights), price category or standing area (events)."
    )
    seat_count = serializers.IntegerField()
    seats = serializers.SerializerMethodField()
    passengers = PassengerSerializer(many=True)
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="End of the hold while HELD; null otherwise."
    )
    created_at = serializers.DateTimeField()
    confirmed_at = serializers.DateTimeField(allow_null=True)
    closed_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_seats(self, booking: Booking) -> list[str]:
        return [p.seat.seat_no for p in booking.passengers.all() if p.seat is not None]

    def to_representation(self, booking: Booking) -> dict[str, Any]:
        data = super().to_representation(booking)
        if booking.status != BookingStatus.HELD:
            data["expires_at"] = None
        # What is sold names the booking: `flightId` (+ code) or `eventId`, never both.
        found = catalogue.owner_item(booking.sale)
        if found is not None:
            owner, item = found
            data[f"{owner}_id"] = item.pk
            if owner == "flight":
                data["flight_code"] = item.code
        return data


class RefundSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    status = serializers.ChoiceField(
        choices=RefundStatus.choices,
        help_text="PENDING until the gateway has paid it back (a moment later), then SUCCEEDED.",
    )
    reason = serializers.ChoiceField(choices=RefundReason.choices)


class CancellationSerializer(serializers.Serializer):
    booking = BookingSerializer()
    refund = RefundSerializer(
        allow_null=True,
        help_text="The refund decided; null when nothing was paid or the policy refunds nothing.",
    )
    policy = RefundQuoteSerializer(
        source="quote", help_text="The refund rule that was applied, and why."
    )


# --- views -------------------------------------------------------------------------------------

HOLD_IDEMPOTENCY_KEY = idempotency_key_parameter(required=False, what="hold")
ARTICLE_BODY = {"flightId": 1001, "customerId": 42, "fareClass": "ECONOMY", "seats": ["12A", "12B"]}


class BookingPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200


class BookingListCreateApi(GenericAPIView):
    pagination_class = BookingPagination
    serializer_class = BookingSerializer

    def get_throttles(self):
        # Only creating a hold is throttled: it takes row locks; reading your bookings does not.
        return [HoldsThrottle()] if self.request.method == "POST" else []

    @extend_schema(
        operation_id="bookings_list",
        tags=["bookings"],
        summary="My bookings",
        responses={200: BookingSerializer(many=True), **problems(400, 401)},
    )
    def get(self, request):
        page = self.paginate_queryset(selectors.bookings_of(customer=request.user))
        return self.get_paginated_response(BookingSerializer(page, many=True).data)

    @extend_schema(
        operation_id="bookings_create",
        tags=["bookings"],
        summary="Hold seats",
        description=(
            "Holds all listed seats (or `passengers` seatless units) for the hold time, or "
            "none: on a flight (`flightId` + `fareClass`) or at an event (`eventId` + the "
            "price category as `category`, or a standing area such as `GA-3` with "
            "`passengers`). Always checked against the database, never against the cached "
            "seat map. "
            "Send an `Idempotency-Key` and retry 5xx answers and lost connections with it: a "
            "retry never makes a second booking, it returns the first one."
        ),
        request=BookingCreateSerializer,
        parameters=[
            HOLD_IDEMPOTENCY_KEY,
            OpenApiParameter(
                TOKEN_HEADER,
                str,
                location=OpenApiParameter.HEADER,
                required=False,
                description=(
                    "Admission token from the waiting room (`GET /api/waiting-rooms/{room_id}/"
                    "queue` once `status` is ADMITTED). Required when the flight is behind a "
                    "waiting room; without a valid one: 403 `waiting-room-required`."
                ),
            ),
        ],
        responses={
            201: BookingSerializer,
            **problems(
                400,
                401,
                403,
                404,
                409,
                413,
                415,
                422,
                429,
                503,
                s403=(
                    "`customerId` names someone else and you may not book on their behalf; "
                    "or the flight is behind a waiting room and no valid admission token "
                    "came (`waiting-room-required`, with `queueUrl`)."
                ),
                s404="No such flight or event (or the event is not on sale).",
                s400="Invalid body (`invalid-request`, with `invalidParams`); an unknown seat "
                "(`seat-not-found`); a seat of another class (`seat-wrong-class`; flights: "
                "`seat-wrong-cabin`); a class the sale does not sell (`class-not-sold`; "
                "flights: `fare-class-not-found`); `passengers` for an event's seated "
                "category (`seats-required`: only standing areas are sold by count).",
                s409="A seat is taken (`seat-unavailable`) or blocked by staff, not for sale "
                "(`seat-blocked`; flights: `seat-unavailable`, as before); the class is sold "
                "out (`sold-out`); the sale is closed (`sale-not-bookable`; flights: "
                "`flight-not-bookable`); or the first request with this Idempotency-Key is "
                "still running. Paying after the sale closed answers "
                "`sale-not-bookable-refunded` (flights: `flight-not-bookable-refunded`). "
                "Flights keep the slugs they answered with before events were sold.",
                s422="This Idempotency-Key was already used for a different request.",
                s503="The database is briefly unreachable (`service-unavailable`) or too busy: "
                "retry after `Retry-After` seconds with the same Idempotency-Key.",
            ),
        },
        examples=[OpenApiExample("The article's request", value=ARTICLE_BODY, request_only=True)],
    )
    def post(self, request):
        data = BookingCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        data = data.validated_data
        customer = self._customer(request.user, data.get("customer_id"))
        sale_id = sale_named_by(data)
        require_admission(request=request, customer_id=customer.pk, sale_id=sale_id)
        common = {
            "customer": customer,
            "sale_id": sale_id,
            "fare_class": data["fare_class"],
            "passenger_names": data.get("passenger_names"),
        }
        key = clean_key(request.headers.get("Idempotency-Key"), required=False, what="hold")

        def hold() -> Booking:
            if "seats" in data:
                return customer_holds.hold_seats(seat_numbers=data["seats"], **common)
            return customer_holds.hold_seatless(passengers=data["passengers"], **common)

        def answer(booking: Booking) -> tuple[int, dict[str, Any]]:
            booking = selectors.booking_just_written(booking=booking)
            return 201, BookingSerializer(booking).data

        if key is None:
            status, body = answer(hold())
            result = IdempotentResult(status, body)
        else:
            asked = {**data, "customer_id": customer.pk}
            result = run_once(
                customer=request.user,
                scope="api-hold",
                key=key,
                request_fingerprint=fingerprint(asked),
                write=hold,
                answer=answer,
                what="hold",
            )
        location = reverse("bookings_api:detail", args=[result.body["booking_id"]])
        return idempotent_response(result, headers={"Location": location})

    @staticmethod
    def _customer(user, customer_id: int | None):
        if customer_id is None or customer_id == user.pk:
            return user
        if not selectors.acts_for_customers(user):
            raise PermissionDenied(gettext("You can only book for yourself."))
        customer = selectors.active_customer(customer_id=customer_id)
        if customer is None:
            raise ValidationError(
                {"customer_id": [gettext("There is no customer %(id)s.") % {"id": customer_id}]}
            )
        return customer


class BookingDetailApi(APIView):
    @extend_schema(
        operation_id="bookings_retrieve",
        tags=["bookings"],
        summary="One of my bookings",
        responses={200: BookingSerializer, **problems(401, 404)},
    )
    def get(self, request, booking_id: int):
        booking = selectors.access_booking(user=request.user, booking_id=booking_id)
        return Response(BookingSerializer(booking).data)

    @extend_schema(
        operation_id="bookings_cancel",
        tags=["bookings"],
        summary="Cancel a booking",
        description=(
            "A HELD booking is released at once and nothing is refunded. A CONFIRMED booking "
            "gives its seats back and is refunded by its fare class's policy (see "
            "`GET /api/bookings/{id}/refund-quote` beforehand); `refund` is the refund decided. "
            "After departure a booking can no longer be cancelled (409)."
        ),
        responses={
            200: CancellationSerializer,
            **problems(
                401,
                403,
                404,
                409,
                410,
                503,
                s409="The booking is already cancelled, or the flight has departed.",
                s410="The hold had already expired; its seats were released.",
            ),
        },
    )
    def delete(self, request, booking_id: int):
        booking = selectors.access_booking(user=request.user, booking_id=booking_id)
        cancellation = cancel_booking(
            customer=request.user,
            booking_id=booking.pk,
            by_staff=selectors.acts_for_customers(request.user),
        )
        booking = selectors.access_booking(user=request.user, booking_id=booking.pk)
        return Response(
            CancellationSerializer(
                {"booking": booking, "refund": cancellation.refund, "quote": cancellation.quote}
            ).data
        )


class BookingPassengersApi(APIView):
    """Name the passengers of a HELD booking (a waitlist offer or a seatless hold arrives
    without names) before paying it."""

    class PassengerNamesInputSerializer(serializers.Serializer):
        passenger_names = serializers.ListField(
            child=serializers.CharField(max_length=120, allow_blank=True, trim_whitespace=True),
            min_length=1,
            max_length=50,
            help_text="One full name per passenger, in seat order (seatless places last).",
        )

    @extend_schema(
        operation_id="bookings_name_passengers",
        tags=["bookings"],
        summary="Name the passengers of a held booking",
        request=PassengerNamesInputSerializer,
        responses={
            200: BookingSerializer,
            **problems(400, 401, 404, 409, 410, s410="The hold has expired."),
        },
    )
    def put(self, request, booking_id: int):
        data = self.PassengerNamesInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        passengers.name_passengers(
            customer=request.user,
            booking_id=booking_id,
            names=data.validated_data["passenger_names"],
        )
        booking = selectors.access_booking(user=request.user, booking_id=booking_id)
        return Response(BookingSerializer(booking).data)


# --- gate check-in -----------------------------------------------------------------------------


class CheckinScanApi(APIView):
    """POST {"code", "flightId" | "eventId"} -> the verdict for the gate (staff only).

    Every verdict (valid, forged, revoked, already_used, wrong_flight, wrong_event) is a 200:
    the scan was answered.  Malformed requests and unknown flights or events are problem+json
    4xx.
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
        )
        return Response(self.OutputSerializer(result).data)
