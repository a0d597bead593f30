"""The bookings API's serializers: what a hold request may say (on a flight or at an event)
and how a booking, its refund and its cancellation read.  Shapes and types only: the engine
decides."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import reverse
from django.utils.translation import gettext
from drf_spectacular.utils import (
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from bookings import catalogue, selectors
from bookings.models import Booking, BookingStatus, SaleKind
from kernel.web.fields import ClassCodeField
from kernel.web.lean import CopiedFields
from payments import selectors as payment_selectors
from payments.api import RefundQuoteSerializer
from payments.models import RefundReason, RefundStatus

DB_BIGINT_MAX = 2**63 - 1


def sale_named_by(data: dict[str, Any]) -> int:
    """The engine's sale behind a request's `eventId` or `flightId` (its serializer let exactly
    one through); the catalogue's 404 if there is none."""
    if "event_id" in data:
        return selectors.sale_id_of(SaleKind.EVENT, data["event_id"])
    return selectors.sale_id_of(SaleKind.FLIGHT, data["flight_id"])


class BookingCreateSerializer(CopiedFields, serializers.Serializer):
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
    fare_class = ClassCodeField(
        required=False,
        help_text=(
            "Flights: the fare class (ECONOMY, BUSINESS). Events: the price category of the "
            "seats (A), or a standing area (GA-3, with `passengers`), as "
            "`GET /api/events/{id}/seats` names them."
        ),
    )
    category = ClassCodeField(required=False, help_text="Events: the same as `fareClass`.")
    booking_class = ClassCodeField(
        required=False,
        allow_blank=True,
        help_text=(
            "Optional: a booking class nested in the fare class (e.g. LAUNCH, SAVER; "
            "`GET /api/flights/{id}/seats` lists them as `fares`), whose price the hold pays "
            "and whose nested limit it counts against. Absent or blank: the fare class's own "
            "(as before). A closed class answers 409 `sold-out` with `bookingClass`; an "
            "unknown one 400 `booking-class-not-found`."
        ),
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
        help_text=(
            "One full name per seat (in seat order) or per passenger. Send them with the "
            "hold: a booking cannot be paid until every passenger has a name (otherwise the "
            "201 says `namesNeeded: true` and `namePassengersUrl` takes them later)."
        ),
    )
    exit_row_confirmed = serializers.BooleanField(
        default=False,
        help_text=(
            "Flights: the customer confirms the exit-row conditions (able and willing to help "
            "in an evacuation, 15 or older, no infant) for every passenger seated in an exit "
            "row (`GET /api/flights/{flightId}/seats` marks them `exitRow: true`). Optional "
            "here: exit-row conditions are confirmed per passenger before check-in. Without "
            "it the seats are held all the same and the 201 says "
            "`exitRowConfirmationNeeded: true`, lists `unconfirmedExitRowPassengers` and "
            "gives `exitRowConfirmationUrl`; online check-in answers 422 "
            "`exit-row-not-confirmed` until it is given (there or with "
            '`PUT namePassengersUrl` `{"exitRowConfirmed": true}` while held). Ignored for '
            "other seats and for events."
        ),
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        return check_hold_request(data)


def check_hold_request(data: dict[str, Any]) -> dict[str, Any]:
    """`BookingCreateSerializer.validate`: the fields together (a flight or an event, seats or
    passengers), the class codes normalised; also the quick path's (storefront.hold_input)."""
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
    data["booking_class"] = data.get("booking_class", "").strip().upper()
    if "seats" in data and "passengers" in data:
        raise ValidationError(
            {"seats": [gettext("Give either `seats` or `passengers`, not both.")]}
        )
    if "seats" not in data and "passengers" not in data:
        raise ValidationError(
            {"seats": [gettext("Give `seats`, or `passengers` for a seatless fare.")]}
        )
    return data


class PassengerSerializer(CopiedFields, serializers.Serializer):
    name = serializers.CharField(source="full_name")
    seat = serializers.CharField(source="seat.seat_no", allow_null=True, default=None)


class UnnamedPassengerSerializer(serializers.Serializer):
    passenger_id = serializers.IntegerField()
    position = serializers.IntegerField(help_text="1-based, in the order `passengerNames` takes.")
    seat = serializers.CharField(allow_null=True, help_text="Null for a seatless place.")


class ExitRowPassengerSerializer(serializers.Serializer):
    passenger_id = serializers.IntegerField()
    seat = serializers.CharField(help_text="The exit-row seat whose conditions are unconfirmed.")


class BookingSerializer(CopiedFields, serializers.Serializer):
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
    booking_class = serializers.CharField(
        help_text="The booking class nested in the fare class; blank: the fare class's own."
    )
    seat_count = serializers.IntegerField()
    seats = serializers.SerializerMethodField()
    passengers = PassengerSerializer(many=True, source="passengers_shown")
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="End of the hold while HELD; null otherwise."
    )
    created_at = serializers.DateTimeField()
    confirmed_at = serializers.DateTimeField(allow_null=True)
    closed_at = serializers.DateTimeField(allow_null=True)
    names_needed = serializers.SerializerMethodField(
        help_text=(
            "True while a passenger of this HELD booking has no name: it cannot be paid "
            "(422 `passenger-names-missing`) until every passenger is named with "
            "`PUT namePassengersUrl` (`passengerNames`). Send `passengerNames` with the hold "
            "to skip that step."
        )
    )
    unnamed_passengers = serializers.SerializerMethodField(
        help_text="Who still needs a name (empty when none), in `passengerNames` order."
    )
    name_passengers_url = serializers.SerializerMethodField(
        help_text='Where to `PUT {"passengerNames": [...]}` (one per passenger).'
    )

    exit_row_confirmation_needed = serializers.SerializerMethodField(
        help_text=(
            "True while a passenger of this HELD or CONFIRMED booking sits in an exit row "
            "without the exit-row conditions confirmed: online check-in refuses them (422 "
            "`exit-row-not-confirmed`) until `exitRowConfirmed: true` is given, at "
            "`exitRowConfirmationUrl`. Paying does not need it."
        )
    )
    unconfirmed_exit_row_passengers = serializers.SerializerMethodField(
        help_text="Who still needs the exit-row confirmation (empty when none), by seat."
    )
    exit_row_confirmation_url = serializers.SerializerMethodField(
        help_text=(
            'Where to give it: while HELD, `PUT` here `{"exitRowConfirmed": true}` (with or '
            "without `passengerNames`); once CONFIRMED, online check-in (`POST` with "
            "`exitRowConfirmed: true`). Null when nobody needs it."
        )
    )

    @extend_schema_field(serializers.BooleanField())
    def get_exit_row_confirmation_needed(self, booking: Booking) -> bool:
        return bool(self.get_unconfirmed_exit_row_passengers(booking))

    def once_per_answer(self, booking: Booking, name: str, compute: Callable) -> Any:
        """`compute(booking)` once per booking answered: three fields read who still needs
        the exit-row confirmation, two who still needs a name.  Keyed by the booking object,
        as a list's one child serializer answers its bookings in turn."""
        memo = self.__dict__.get("_per_answer")
        if memo is None or memo[0] is not booking:
            memo = self._per_answer = (booking, {})
        found = memo[1]
        if name not in found:
            found[name] = compute(booking)
        return found[name]

    @extend_schema_field(ExitRowPassengerSerializer(many=True))
    def get_unconfirmed_exit_row_passengers(self, booking: Booking) -> list[dict[str, Any]]:
        return self.once_per_answer(
            booking, "unconfirmed_exit_row", self.find_unconfirmed_exit_rows
        )

    def find_unconfirmed_exit_rows(self, booking: Booking) -> list[dict[str, Any]]:
        if booking.status not in (BookingStatus.HELD, BookingStatus.CONFIRMED) or booking.closed_at:
            return []  # nobody of it flies
        return unconfirmed_exit_rows(booking, booking.passengers.all())

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_exit_row_confirmation_url(self, booking: Booking) -> str | None:
        if not self.get_exit_row_confirmation_needed(booking):
            return None
        if booking.status == BookingStatus.HELD:
            return reverse("bookings_api:passengers", args=[booking.pk])
        return catalogue.conditions_confirmation_url(booking.sale, booking.pk)

    @extend_schema_field(serializers.BooleanField())
    def get_names_needed(self, booking: Booking) -> bool:
        return booking.status == BookingStatus.HELD and bool(self.get_unnamed_passengers(booking))

    @extend_schema_field(UnnamedPassengerSerializer(many=True))
    def get_unnamed_passengers(self, booking: Booking) -> list[dict[str, Any]]:
        return self.once_per_answer(booking, "unnamed", self.find_unnamed)

    def find_unnamed(self, booking: Booking) -> list[dict[str, Any]]:
        # The order of `bookings.selectors.check_passengers_named`: by seat, seatless last.
        in_order = sorted(
            booking.passengers_shown(),
            key=lambda p: (p.seat is None, p.seat.seat_no if p.seat else "", p.pk),
        )
        return [
            {"passenger_id": p.pk, "position": position, "seat": p.seat.seat_no if p.seat else None}
            for position, p in enumerate(in_order, start=1)
            if not p.full_name.strip()
        ]

    def get_name_passengers_url(self, booking: Booking) -> str:
        return reverse("bookings_api:passengers", args=[booking.pk])

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_seats(self, booking: Booking) -> list[str]:
        return [p.seat.seat_no for p in booking.passengers_shown() if p.seat is not None]

    def to_representation(self, booking: Booking) -> dict[str, Any]:
        data = super().to_representation(booking)
        if booking.status != BookingStatus.HELD:
            data["expires_at"] = None
        name_what_is_sold(data, booking)
        return data


def unconfirmed_exit_rows(booking: Booking, passengers) -> list[dict[str, Any]]:
    """Who of `passengers` sits in a seat with conditions (an exit row) not yet confirmed,
    by seat (the serializer's and storefront.hold_answer's one rule)."""
    unconfirmed = {
        p.seat.seat_no: p.pk
        for p in passengers
        if p.is_live and p.seat is not None and p.seat_conditions_confirmed_at is None
    }
    if not unconfirmed:
        return []
    return [
        {"passenger_id": unconfirmed[seat_no], "seat": seat_no}
        for seat_no in sorted(catalogue.seats_with_conditions(booking.sale, unconfirmed))
    ]


def name_what_is_sold(data: dict[str, Any], booking: Booking) -> None:
    """What is sold names the booking in its answer: `flightId` (+ code) or `eventId`, never
    both (the serializer's and storefront.hold_answer's one rule)."""
    found = catalogue.owner_item(booking.sale)
    if found is not None:
        owner, item = found
        data[f"{owner}_id"] = item.pk
        if owner == "flight":
            data["flight_code"] = item.code


class RefundSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    status = serializers.ChoiceField(
        choices=RefundStatus.choices,
        help_text="PENDING until the gateway has paid it back (a moment later), then SUCCEEDED.",
    )
    reason = serializers.ChoiceField(choices=RefundReason.choices)


class BookingDetailSerializer(BookingSerializer):
    """One booking as `GET /api/bookings/{bookingId}` reads it: with its refunds, so the
    outcome of a cancellation (PENDING, then SUCCEEDED or FAILED) can be followed."""

    refunds = serializers.SerializerMethodField(
        help_text="Every refund of this booking's payments, oldest first; empty when none."
    )

    @extend_schema_field(RefundSerializer(many=True))
    def get_refunds(self, booking: Booking) -> list[dict[str, Any]]:
        if self.context.get("no_payments_yet"):  # a hold just made: nothing paid, no query
            return []
        return RefundSerializer(payment_selectors.refunds_of(booking_id=booking.pk), many=True).data


class CancellationSerializer(serializers.Serializer):
    booking = BookingDetailSerializer()
    refund = RefundSerializer(
        allow_null=True,
        help_text="The refund decided; null when nothing was paid or the policy refunds nothing.",
    )
    policy = RefundQuoteSerializer(
        source="quote", help_text="The refund rule that was applied, and why."
    )
