"""Resale through the waitlist over REST (issue 29, item 4): list some or all of a confirmed
booking's tickets for resale, see the listing, withdraw it.  Thin: one service call per
operation."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings import resale, resale_selectors, selectors
from bookings.errors import ResaleNotFound
from bookings.models import Resale
from kernel.web.openapi import problems
from payments.resale import list_booking_for_resale


class ResaleSerializer(serializers.ModelSerializer):
    resale_id = serializers.IntegerField(source="pk")
    booking_id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Resale._meta.get_field("status").choices)
    face_value = serializers.DecimalField(max_digits=12, decimal_places=2)
    fee = serializers.DecimalField(
        max_digits=12, decimal_places=2, help_text="Kept from the refund once sold."
    )
    refund_when_sold = serializers.SerializerMethodField()
    buyer_booking_id = serializers.IntegerField(allow_null=True)
    ticket_ids = serializers.SerializerMethodField(help_text="The tickets listed.")
    seats = serializers.SerializerMethodField(
        help_text="Their seats (none for standing tickets): the ones that go to the buyer."
    )

    class Meta:
        model = Resale
        fields = [
            "resale_id",
            "booking_id",
            "status",
            "face_value",
            "fee",
            "refund_when_sold",
            "currency",
            "listed_at",
            "closed_at",
            "buyer_booking_id",
            "ticket_ids",
            "seats",
        ]

    def get_refund_when_sold(self, resale: Resale) -> str:
        return str(resale.face_value - resale.fee)

    def get_ticket_ids(self, resale: Resale) -> list[int]:
        return [t.pk for t in resale_selectors.listed_tickets(resale=resale)]

    def get_seats(self, resale: Resale) -> list[str]:
        return resale_selectors.listed_seats(resale=resale)


class ResaleInputSerializer(serializers.Serializer):
    ticket_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        min_length=1,
        max_length=9,
        required=False,
        help_text=(
            "The tickets to resell (ids from the booking's tickets). Absent: every ticket of "
            "the booking. The others stay valid and yours, whether or not these sell."
        ),
    )


class BookingResaleApi(APIView):
    @extend_schema(
        operation_id="bookings_resale_retrieve",
        tags=["bookings"],
        summary="The resale of one of my bookings",
        description="The latest resale listing of the booking, whatever its state.",
        responses={200: ResaleSerializer, **problems(401, 404)},
    )
    def get(self, request, booking_id: int):
        booking = selectors.access_booking(user=request.user, booking_id=booking_id)
        listed = resale_selectors.latest_resale(booking_id=booking.pk)
        if listed is None:
            raise ResaleNotFound()
        return Response(ResaleSerializer(listed).data)

    @extend_schema(
        operation_id="bookings_resale_create",
        tags=["bookings"],
        summary="Resell my tickets through the waitlist",
        description=(
            "Lists the chosen tickets (`ticketIds`; all when absent) of a CONFIRMED booking at "
            "face value: the booking's fare shared equally, plus each listed seat's surcharge. "
            "They are offered to the first party on the waitlist of their number that accepts "
            "them (a hold it pays like any other). They stay yours until that party pays: then "
            "exactly those tickets are revoked, their seats are the buyer's, and you are "
            "refunded their face value less the resale fee of the refund policy; your other "
            "tickets stay valid. Withdraw with DELETE before that. A ticket of another "
            "booking is 400 `tickets-not-in-booking`."
        ),
        request=ResaleInputSerializer,
        responses={
            201: ResaleSerializer,
            **problems(
                400,
                401,
                404,
                409,
                503,
                s409="Already listed, cancelled, not confirmed, a chosen ticket used or "
                "revoked, or the sale closed.",
            ),
        },
    )
    def post(self, request, booking_id: int):
        data = ResaleInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        listed = list_booking_for_resale(
            customer=request.user,
            booking_id=booking_id,
            ticket_ids=data.validated_data.get("ticket_ids"),
        )
        return Response(ResaleSerializer(listed).data, status=201)

    @extend_schema(
        operation_id="bookings_resale_withdraw",
        tags=["bookings"],
        summary="Withdraw the resale of my tickets",
        description="Before anyone pays for them; an offer made meanwhile is withdrawn too.",
        request=None,
        responses={
            200: ResaleSerializer,
            **problems(
                401, 404, 409, 503, s409="Not listed, or a buyer is paying for them right now."
            ),
        },
    )
    def delete(self, request, booking_id: int):
        return Response(
            ResaleSerializer(
                resale.withdraw_resale(customer=request.user, booking_id=booking_id)
            ).data
        )
