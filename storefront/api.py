"""Bookings over REST: hold seats, list and read your bookings, cancel.

Thin on purpose: input serializers check shapes and types, the engine
(`bookings.customer_holds`, `bookings.passengers`) decides, domain errors become problem
details in `config.api.exceptions`.
"""

from __future__ import annotations

from typing import Any

from django.utils.text import format_lazy
from django.utils.translation import gettext
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings import customer_holds, passengers, selectors
from bookings.models import Booking
from kernel.idempotency import IdempotentResult, clean_key, fingerprint, run_once
from kernel.web.headers import header
from kernel.web.idempotency import idempotency_key_parameter, idempotent_response
from kernel.web.lean import AllowedMethodsOnce
from kernel.web.openapi import problems
from kernel.web.pagination import DEFAULT_LIMIT, MAX_LIMIT, PAGE_PARAMETERS, page_of
from kernel.web.throttles import HoldsThrottle, rate_text
from payments.cancellation import cancel_booking
from storefront.booking_serializers import (
    BookingCreateSerializer,
    BookingDetailSerializer,
    BookingSerializer,
    CancellationSerializer,
    sale_named_by,
)
from storefront.hold_answer import booking_url, fresh_hold_answer
from storefront.hold_input import hold_request
from waitroom.gate import TOKEN_HEADER, admission_with_the_hold

HOLD_IDEMPOTENCY_KEY = idempotency_key_parameter(required=False, what="hold")
ARTICLE_BODY = {
    "flightId": 1001,
    "customerId": 42,
    "fareClass": "ECONOMY",
    "seats": ["12A", "12B"],
    "passengerNames": ["Ana Lima", "Bo Chen"],
    # Rows 12 and 13 are the A320's exit rows: confirmed here, check-in asks nothing more.
    "exitRowConfirmed": True,
}
EVENT_STANDING_BODY = {"eventId": 7, "fareClass": "GA-3", "passengers": 2}


class BookingPagination(LimitOffsetPagination):
    """The API's one pagination (`kernel.web.pagination`: `limit`, `offset`, `Link`), with the
    body this list always had (`count`, `next`, `previous`, `results`)."""

    default_limit = DEFAULT_LIMIT
    max_limit = MAX_LIMIT

    def paginate_queryset(self, queryset, request, view=None):
        # DRF's own parsing quietly reads a negative or non-numeric `offset` as 0 and clamps
        # `limit`; the schema (and every other list) says 400 for those.
        page_of(request.query_params, default_limit=self.default_limit)
        return super().paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data):
        response = super().get_paginated_response(data)
        links = [
            f'<{url}>; rel="{rel}"'
            for url, rel in ((self.get_next_link(), "next"), (self.get_previous_link(), "prev"))
            if url
        ]
        if links:
            response["Link"] = ", ".join(links)
        return response


class BookingPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="All your bookings.")
    next = serializers.CharField(allow_null=True, help_text="The next page's URL, or null.")
    previous = serializers.CharField(allow_null=True, help_text="The previous page's URL.")
    results = BookingSerializer(many=True)

    class Meta:
        ref_name = "BookingPage"


class BookingListCreateApi(AllowedMethodsOnce, GenericAPIView):
    pagination_class = BookingPagination
    serializer_class = BookingSerializer

    def get_throttles(self):
        # Only creating a hold is throttled: it takes row locks; reading your bookings does not.
        return [HoldsThrottle()] if self.request.method == "POST" else []

    @extend_schema(
        operation_id="bookings_list",
        tags=["bookings"],
        summary="My bookings",
        description=(
            "Newest first, paged with `limit` (default 50, at most 200) and `offset`: `next` "
            'in the body and `rel="next"` in the `Link` header while more follow.'
        ),
        parameters=PAGE_PARAMETERS,
        responses={200: BookingPageSerializer, **problems(400, 401)},
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
            "Send `passengerNames` (one per seat or passenger) with the hold: every passenger "
            "needs a name before the booking can be paid. A hold without them is still made; "
            "its 201 then says `namesNeeded: true`, lists `unnamedPassengers` and gives "
            "`namePassengersUrl` for `PUT` with `passengerNames`. "
            "Exit-row seats (`exitRow: true` on the seat map) are held without more ado; their "
            "conditions are confirmed per passenger before check-in: send "
            "`exitRowConfirmed: true` with the hold, or later (the 201 then says "
            "`exitRowConfirmationNeeded: true`, lists `unconfirmedExitRowPassengers` and "
            "gives `exitRowConfirmationUrl`). "
            "Send an `Idempotency-Key` and retry 5xx answers and lost connections with it: a "
            "retry never makes a second booking, it returns the first one as it is now "
            "(`Idempotent-Replayed: true`; e.g. EXPIRED or CONFIRMED, not the HELD of the "
            "first answer). A hold is over at `expiresAt`; until the sweep (every 30 s) "
            "marks it EXPIRED it may still read HELD with an `expiresAt` in the past."
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
            201: BookingDetailSerializer,
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
                "category (`seats-required`: only standing areas are sold by count); a "
                "`bookingClass` the fare class does not have (`booking-class-not-found`).",
                s409="A seat is taken (`seat-unavailable`) or blocked by staff, not for sale "
                "(`seat-blocked`; flights: `seat-unavailable`, as before); at an event, the "
                "seats would leave a single free seat alone in its row while other seats "
                "would not (`leaves-single-seat`, with `stranded` and a `suggestion`); the "
                "class is sold out (`sold-out`; a closed booking class: the same with "
                "`bookingClass`); the sale is closed (`sale-not-bookable`; flights: "
                "`flight-not-bookable`); or the first request with this Idempotency-Key is "
                "still running. Paying after the sale closed answers "
                "`sale-not-bookable-refunded` (flights: `flight-not-bookable-refunded`). "
                "Flights keep the slugs they answered with before events were sold.",
                s422="This Idempotency-Key was already used for a different request.",
                s429=format_lazy(
                    "More than {} holds by this account (with the seat-picker page: one budget); "
                    "retry after `Retry-After` seconds.",
                    rate_text("holds"),
                ),
                s503="The database is briefly unreachable (`service-unavailable`) or too busy: "
                "retry after `Retry-After` seconds with the same Idempotency-Key.",
            ),
        },
        examples=[
            OpenApiExample(
                "The article's request, with the passengers' names",
                value=ARTICLE_BODY,
                request_only=True,
            ),
            OpenApiExample(
                "A standing area at an event (names later, with namePassengersUrl)",
                value=EVENT_STANDING_BODY,
                request_only=True,
            ),
        ],
    )
    def post(self, request):
        # BookingCreateSerializer's validated data (a quick path for the usual body).
        data = hold_request(request.data)
        customer = self._customer(request.user, data.get("customer_id"))
        sale_id = sale_named_by(data)
        # The waiting room's check rides in the hold filters' first round trip (issue 26).
        with admission_with_the_hold(request=request, customer_id=customer.pk, sale_id=sale_id):
            result = self._hold_once(request, data, customer, sale_id)
        booking_id = result.body["booking_id"]
        if result.replayed:
            # A replay answers the booking as it is now (confirmed, cancelled, expired), not
            # the stored HELD of its first answer, and says it is a replay.
            current = selectors.access_booking(user=request.user, booking_id=booking_id)
            result = IdempotentResult(
                result.status, BookingDetailSerializer(current).data, replayed=True
            )
        location = booking_url("bookings_api:detail", booking_id)
        return idempotent_response(result, headers={"Location": location})

    @staticmethod
    def _hold_once(request, data, customer, sale_id: int) -> IdempotentResult:
        common = {
            "customer": customer,
            "sale_id": sale_id,
            "fare_class": data["fare_class"],
            "booking_class": data["booking_class"],
            "passenger_names": data.get("passenger_names"),
        }
        key = clean_key(header(request, "Idempotency-Key"), required=False, what="hold")

        def hold() -> Booking:
            if "seats" in data:
                return customer_holds.hold_chosen_seats(
                    seat_numbers=data["seats"],
                    # Exit rows are confirmed per passenger before check-in: given here it
                    # is recorded; without it the 201 says who still needs it.
                    conditions_confirmed=data["exit_row_confirmed"],
                    confirm_now=False,
                    **common,
                )
            return customer_holds.hold_seatless(passengers=data["passengers"], **common)

        def answer(booking: Booking) -> tuple[int, dict[str, Any]]:
            # A fresh hold's body without DRF's field machinery (proven equal to the
            # serializer's: storefront.hold_answer); anything else is serialised.
            body = fresh_hold_answer(booking)
            if body is None:
                booking = selectors.booking_just_written(booking=booking)
                body = BookingDetailSerializer(booking, context={"no_payments_yet": True}).data
            return 201, body

        if key is None:
            status, body = answer(hold())
            result = IdempotentResult(status, body)
        else:
            asked = {**data, "customer_id": customer.pk}
            result = run_once(
                sale_id=sale_id,
                customer=request.user,
                scope="api-hold",
                key=key,
                request_fingerprint=fingerprint(asked),
                write=hold,
                answer=answer,
                what="hold",
            )
        return result

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
        description="The booking with its passengers and its refunds (amount, state, reason).",
        responses={200: BookingDetailSerializer, **problems(401, 404)},
    )
    def get(self, request, booking_id: int):
        booking = selectors.access_booking(user=request.user, booking_id=booking_id)
        return Response(BookingDetailSerializer(booking).data)

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
    without names) before paying it, and/or confirm the exit-row conditions of their seats."""

    class PassengerNamesInputSerializer(serializers.Serializer):
        passenger_names = serializers.ListField(
            # Blank names are refused (every passenger needs one), so the schema says so.
            child=serializers.CharField(max_length=120, trim_whitespace=True),
            min_length=1,
            max_length=50,
            required=False,
            help_text=(
                "One full name per passenger, in seat order (seatless places last). Absent: "
                "the names stay as they are (then `exitRowConfirmed: true` is required)."
            ),
        )
        exit_row_confirmed = serializers.BooleanField(
            default=False,
            help_text=(
                "Flights: the customer confirms the exit-row conditions for every passenger "
                "seated in an exit row (the booking's `unconfirmedExitRowPassengers`), so "
                "online check-in asks nothing more of them. False or absent changes nothing."
            ),
        )

        def validate(self, data: dict) -> dict:
            if "passenger_names" not in data and not data["exit_row_confirmed"]:
                raise ValidationError(
                    {"passenger_names": [gettext("Give `passengerNames` or `exitRowConfirmed`.")]}
                )
            return data

    @extend_schema(
        operation_id="bookings_name_passengers",
        tags=["bookings"],
        summary="Name the passengers of a held booking, or confirm their exit-row conditions",
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
            names=data.validated_data.get("passenger_names"),
            conditions_confirmed=data.validated_data["exit_row_confirmed"],
        )
        booking = selectors.access_booking(user=request.user, booking_id=booking_id)
        return Response(BookingSerializer(booking).data)
