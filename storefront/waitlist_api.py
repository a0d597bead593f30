"""The waitlist over REST: join, look up your place, leave.  Thin: validate, call a service.

One waitlist (per sale and inventory class), three doors: `/api/flights/{id}/waitlist` by fare
class, `/api/events/{id}/waitlist` by price category (or standing area), and the waiting
room's one-click join for those told a seat is unlikely
(`/api/waiting-rooms/{room_id}/waitlist`, whose rule is the room's:
`waitroom.room_waitlist.join_waitlist_from_queue`)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings import catalogue, waitlist, waitlist_selectors
from bookings.errors import NotWaiting
from bookings.models import SaleKind, WaitlistEntry, WaitlistStatus
from bookings.selectors import sale_id_of
from kernel.web.fields import (
    CLASS_CODE_MAX_LENGTH,
    CLASS_CODE_PATTERN,
    ClassCodeField,
    NonNegativePriceField,
)
from kernel.web.openapi import problems
from waitroom import room_waitlist
from waitroom.room_api import ROOM_ID_NOTE

# A flight's fare classes and the one assumed when none is named, from the flights catalogue
# (read once the apps are ready, as every front door is imported).
FARE_CLASSES = catalogue.class_choices(SaleKind.FLIGHT)
DEFAULT_FARE_CLASS = catalogue.default_class(SaleKind.FLIGHT)


def sale_of_flight(flight_id: int) -> int:
    """The sale of the flight the URL names; a missing flight is a 404 problem."""
    return sale_id_of(SaleKind.FLIGHT, flight_id)


class JoinSerializer(serializers.Serializer):
    fare_class = serializers.ChoiceField(choices=FARE_CLASSES, default=DEFAULT_FARE_CLASS)
    party_size = serializers.IntegerField(min_value=1, max_value=9)
    max_seat_price = NonNegativePriceField(
        required=False,
        help_text="The most you pay per seat, its surcharge included (default: any).",
    )


class FareClassQuerySerializer(serializers.Serializer):
    # Query strings are not run through the camelCase parser: the field keeps its wire name.
    def get_fields(self):
        return {
            "fareClass": serializers.ChoiceField(choices=FARE_CLASSES, default=DEFAULT_FARE_CLASS)
        }


def fare_class_from(request) -> str:
    query = FareClassQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query.validated_data["fareClass"]


class OfferSerializer(serializers.Serializer):
    booking_id = serializers.IntegerField(source="pk")
    status = serializers.CharField()
    expires_at = serializers.DateTimeField()
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()


class EntrySerializer(serializers.Serializer):
    entry_id = serializers.IntegerField(source="pk")
    flight_id = serializers.IntegerField(source="sale.flight.id")
    fare_class = serializers.ChoiceField(choices=FARE_CLASSES)
    party_size = serializers.IntegerField()
    sections = serializers.ListField(child=serializers.CharField(), help_text="Empty: any.")
    max_seat_price = serializers.DecimalField(
        max_digits=12, decimal_places=2, allow_null=True, help_text="Null: any."
    )
    status = serializers.ChoiceField(choices=WaitlistStatus.choices)
    position = serializers.SerializerMethodField(
        help_text="1-based place while WAITING, else null."
    )
    joined_at = serializers.DateTimeField()
    offer = OfferSerializer(allow_null=True, help_text="The hold made for you once seats freed up.")

    def get_position(self, entry: WaitlistEntry) -> int | None:
        return waitlist_selectors.waitlist_position(entry=entry)


FARE_CLASS_PARAM = OpenApiParameter(
    "fareClass",
    str,
    enum=[code for code, _ in FARE_CLASSES],
    required=False,
    description=f"Default {DEFAULT_FARE_CLASS}.",
)


class WaitlistApi(APIView):
    @extend_schema(
        operation_id="waitlist_status",
        parameters=[FARE_CLASS_PARAM],
        responses={200: EntrySerializer, **problems(400, 401, 404)},
        tags=["waitlist"],
    )
    def get(self, request, flight_id: int):
        entry = waitlist_selectors.active_entry(
            customer=request.user,
            sale_id=sale_of_flight(flight_id),
            fare_class=fare_class_from(request),
        )
        if entry is None:
            raise NotWaiting("You are not on this waitlist.")
        return Response(EntrySerializer(entry).data)

    @extend_schema(
        operation_id="waitlist_join",
        request=JoinSerializer,
        responses={201: EntrySerializer, **problems(400, 401, 403, 404, 409, 429)},
        tags=["waitlist"],
        description="Join the waitlist of a sold-out fare class (409 while seats are available).",
    )
    def post(self, request, flight_id: int):
        data = JoinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry = waitlist.join_waitlist(
            customer=request.user,
            sale_id=sale_of_flight(flight_id),
            **data.validated_data,
        )
        return Response(EntrySerializer(entry).data, status=201)

    @extend_schema(
        operation_id="waitlist_leave",
        parameters=[FARE_CLASS_PARAM],
        responses={200: EntrySerializer, **problems(400, 401, 404)},
        tags=["waitlist"],
    )
    def delete(self, request, flight_id: int):
        entry = waitlist.leave_waitlist(
            customer=request.user,
            sale_id=sale_of_flight(flight_id),
            fare_class=fare_class_from(request),
        )
        return Response(EntrySerializer(entry).data)


# --- events ----------------------------------------------------------------------------------


class EventJoinSerializer(serializers.Serializer):
    category = ClassCodeField(
        help_text="Price category (A) or standing area (GA-3) that is sold out."
    )
    party_size = serializers.IntegerField(min_value=1, max_value=9)
    sections = serializers.ListField(
        child=serializers.CharField(max_length=60),
        max_length=20,
        required=False,
        help_text=(
            "Seated categories: the sections you accept (default: any). The offer is always "
            "`partySize` seats side by side in one row, no aisle between."
        ),
    )
    max_seat_price = NonNegativePriceField(
        required=False, help_text="The most you pay per seat (default: any)."
    )


class CategoryQuerySerializer(serializers.Serializer):
    def get_fields(self):
        return {"category": ClassCodeField()}


class EventEntrySerializer(EntrySerializer):
    flight_id = None
    event_id = serializers.IntegerField(source="sale.event.id")
    fare_class = serializers.CharField(help_text="The price category or standing area.")


CATEGORY_PARAM = OpenApiParameter(
    "category",
    {"type": "string", "pattern": CLASS_CODE_PATTERN, "maxLength": CLASS_CODE_MAX_LENGTH},
    required=True,
    description="Price category or standing area, e.g. A.",
)


def _category_from(request) -> str:
    query = CategoryQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query.validated_data["category"].strip().upper()


class EventWaitlistApi(APIView):
    """The same waitlist as the flights', for an event's sold-out category."""

    @extend_schema(
        operation_id="event_waitlist_status",
        parameters=[CATEGORY_PARAM],
        responses={200: EventEntrySerializer, **problems(400, 401, 404)},
        tags=["waitlist"],
    )
    def get(self, request, event_id: int):
        entry = waitlist_selectors.active_entry(
            customer=request.user,
            sale_id=sale_id_of(SaleKind.EVENT, event_id),
            fare_class=_category_from(request),
        )
        if entry is None:
            raise NotWaiting("You are not on this waitlist.")
        return Response(EventEntrySerializer(entry).data)

    @extend_schema(
        operation_id="event_waitlist_join",
        request=EventJoinSerializer,
        responses={201: EventEntrySerializer, **problems(400, 401, 403, 404, 409, 429)},
        tags=["waitlist"],
        description=(
            "Join the waitlist of a sold-out price category or standing area (409 while "
            "places are available). Freed places are offered in order as a hold to pay."
        ),
    )
    def post(self, request, event_id: int):
        data = EventJoinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry = waitlist.join_waitlist(
            customer=request.user,
            sale_id=sale_id_of(SaleKind.EVENT, event_id),
            fare_class=data.validated_data["category"].strip().upper(),
            party_size=data.validated_data["party_size"],
            sections=data.validated_data.get("sections", ()),
            max_seat_price=data.validated_data.get("max_seat_price"),
        )
        return Response(EventEntrySerializer(entry).data, status=201)

    @extend_schema(
        operation_id="event_waitlist_leave",
        parameters=[CATEGORY_PARAM],
        responses={200: EventEntrySerializer, **problems(400, 401, 404)},
        tags=["waitlist"],
    )
    def delete(self, request, event_id: int):
        entry = waitlist.leave_waitlist(
            customer=request.user,
            sale_id=sale_id_of(SaleKind.EVENT, event_id),
            fare_class=_category_from(request),
        )
        return Response(EventEntrySerializer(entry).data)


# --- the waiting room's one-click join -------------------------------------------------------


class WaitlistFromQueueSerializer(serializers.Serializer):
    # Checked against the room's sale's own classes by the service (flights and events).
    fare_class = ClassCodeField(
        required=False,
        help_text=(
            f"An inventory class of the sale: a flight's fare class (default "
            f"{DEFAULT_FARE_CLASS}), an event's price category or standing area (required)."
        ),
    )
    party_size = serializers.IntegerField(min_value=1, max_value=9, default=1)


class QueueWaitlistApi(APIView):
    @extend_schema(
        operation_id="waiting_room_join_waitlist",
        request=WaitlistFromQueueSerializer,
        description=(
            "For those told a seat is unlikely (`unlikely: true`): join the flight's waitlist "
            "while keeping the queue place. 409 `still-likely` otherwise. " + ROOM_ID_NOTE
        ),
        responses={201: EntrySerializer, **problems(400, 401, 404, 409, 503)},
        tags=["waiting room"],
    )
    def post(self, request, room_id: int):
        data = WaitlistFromQueueSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry = room_waitlist.join_waitlist_from_queue(
            room_id=room_id,
            customer=request.user,
            fare_class=data.validated_data.get("fare_class"),
            party_size=data.validated_data["party_size"],
        )
        answer = EventEntrySerializer if entry.sale.kind == SaleKind.EVENT else EntrySerializer
        return Response(answer(entry).data, status=201)
