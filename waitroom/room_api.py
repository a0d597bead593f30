"""The waiting room over REST: a sale's public facts, your place (the polling endpoint that
also hands out the admission token), joining, and the one-click waitlist.  Thin."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings.models import SaleKind as EngineSaleKind
from kernel.web.client_ip import client_ip
from kernel.web.openapi import problems
from waitroom import room, room_selectors, room_waitlist
from waitroom.api import DEFAULT_FARE_CLASS, EntrySerializer, EventEntrySerializer
from waitroom.errors import SaleNotFound
from waitroom.models import ProtectedSale


def sale_or_404(sale_id: int) -> ProtectedSale:
    sale = ProtectedSale.objects.filter(pk=sale_id).first()
    if sale is None:
        raise SaleNotFound(f"There is no waiting room {sale_id}.")
    return sale


class SaleSerializer(serializers.Serializer):
    sale_id = serializers.IntegerField(source="pk")
    kind = serializers.CharField()
    flight_id = serializers.IntegerField(allow_null=True)
    opens_at = serializers.DateTimeField()
    admit_per_minute = serializers.IntegerField()
    paused = serializers.BooleanField()
    seed_commitment = serializers.CharField(
        help_text="SHA-256 of the shuffle seed, published before the on-sale time."
    )
    seed = serializers.CharField(
        source="seed_published",
        allow_null=True,
        help_text="The shuffle seed, published once the pre-queue was shuffled.",
    )
    shuffled_at = serializers.DateTimeField(allow_null=True)
    shuffled_count = serializers.IntegerField()
    shuffle_algorithm = serializers.SerializerMethodField()

    def get_shuffle_algorithm(self, sale) -> str:
        return room_selectors.SHUFFLE_ALGORITHM


QueueStatusSerializer = inline_serializer(
    "QueueStatus",
    {
        "sale_id": serializers.IntegerField(),
        "status": serializers.ChoiceField(
            choices=["NOT_JOINED", "PREQUEUE", "WAITING", "ADMITTED", "EXPIRED"]
        ),
        "position": serializers.IntegerField(required=False, help_text="1-based, WAITING."),
        "ahead": serializers.IntegerField(required=False),
        "eta_seconds": serializers.IntegerField(required=False, allow_null=True),
        "unlikely": serializers.BooleanField(
            required=False,
            help_text="Beyond the inventory horizon: a seat is unlikely; the waitlist is open.",
        ),
        "paused": serializers.BooleanField(required=False),
        "prequeue": serializers.IntegerField(required=False, help_text="PREQUEUE: how many."),
        "token": serializers.CharField(
            required=False,
            help_text="ADMITTED: send it as `X-Waiting-Room-Token` with `POST /api/bookings`.",
        ),
        "expires_at": serializers.DateTimeField(required=False),
        "seed_commitment": serializers.CharField(),
        "seed": serializers.CharField(allow_null=True),
        "version": serializers.IntegerField(required=False),
    },
)


class WaitlistFromQueueSerializer(serializers.Serializer):
    # Checked against the protected sale's own classes by the service (flights and events).
    fare_class = serializers.CharField(
        max_length=10,
        required=False,
        help_text=(
            f"An inventory class of the sale: a flight's fare class (default "
            f"{DEFAULT_FARE_CLASS}), an event's price category or standing area (required)."
        ),
    )
    party_size = serializers.IntegerField(min_value=1, max_value=9, default=1)


class SaleApi(APIView):
    @extend_schema(
        operation_id="waiting_room_retrieve",
        responses={200: SaleSerializer, **problems(401, 404)},
        tags=["waiting room"],
    )
    def get(self, request, sale_id: int):
        return Response(SaleSerializer(sale_or_404(sale_id)).data)


class QueueApi(APIView):
    @extend_schema(
        operation_id="waiting_room_queue_status",
        description=(
            "Your place: poll it (every few seconds) when you cannot use the websocket "
            "`/ws/waiting-room/{saleId}/`. Once ADMITTED it carries your admission token."
        ),
        responses={200: QueueStatusSerializer, **problems(401, 404, 503)},
        tags=["waiting room"],
    )
    def get(self, request, sale_id: int):
        sale = sale_or_404(sale_id)
        return Response(room_selectors.queue_status(sale=sale, customer_id=request.user.pk))

    @extend_schema(
        operation_id="waiting_room_queue_join",
        request=None,
        description=(
            "Take a place (before the on-sale time: the pre-queue, shuffled at the on-sale "
            "time). Joining again keeps your place. Limited per account and per address "
            "(429 `too-many-joins` with Retry-After); 503 while the queue store is down. "
            "A room that lets in only verified e-mail addresses answers 403 "
            "`email-not-verified` (with `sendLinkUrl`) to an account whose address is not."
        ),
        responses={200: QueueStatusSerializer, **problems(401, 403, 404, 429, 503)},
        tags=["waiting room"],
    )
    def post(self, request, sale_id: int):
        # The join limit per address counts customers, not our proxy (kernel/web/client_ip.py).
        room.join_queue(sale_id=sale_id, customer=request.user, address=client_ip(request) or None)
        sale = sale_or_404(sale_id)
        return Response(room_selectors.queue_status(sale=sale, customer_id=request.user.pk))


class QueueWaitlistApi(APIView):
    @extend_schema(
        operation_id="waiting_room_join_waitlist",
        request=WaitlistFromQueueSerializer,
        description=(
            "For those told a seat is unlikely (`unlikely: true`): join the flight's waitlist "
            "while keeping the queue place. 409 `still-likely` otherwise."
        ),
        responses={201: EntrySerializer, **problems(400, 401, 404, 409, 503)},
        tags=["waiting room"],
    )
    def post(self, request, sale_id: int):
        data = WaitlistFromQueueSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry = room_waitlist.join_waitlist_from_queue(
            sale_id=sale_id,
            customer=request.user,
            fare_class=data.validated_data.get("fare_class"),
            party_size=data.validated_data["party_size"],
        )
        answer = (
            EventEntrySerializer if entry.sale.kind == EngineSaleKind.EVENT else EntrySerializer
        )
        return Response(answer(entry).data, status=201)
