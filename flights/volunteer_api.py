"""A volunteer offer answered over the API (as on the booking page): thin, validate and call
`flights.denied_boarding.answer_offer`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from flights.denied_boarding import answer_offer
from flights.eu261 import Remedy
from flights.models import OfferStatus, PayoutMethod
from kernel.web.openapi import problems


class VolunteerAnswerInputSerializer(serializers.Serializer):
    accept = serializers.BooleanField(help_text="True: give up the seat; false: keep it.")
    remedy = serializers.ChoiceField(
        choices=Remedy.choices, default=Remedy.REROUTING, help_text="Next flight or refund."
    )
    payout_method = serializers.ChoiceField(choices=PayoutMethod.choices, default=PayoutMethod.CASH)
    voucher_agreed = serializers.BooleanField(
        default=False, help_text="The passenger's signed agreement to a voucher (Art. 7(3))."
    )


class VolunteerAnswerSerializer(serializers.Serializer):
    offer_id = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=OfferStatus.choices,
        help_text="WITHDRAWN: enough volunteers already, the passenger keeps the seat.",
    )


class VolunteerAnswerApi(APIView):
    @extend_schema(
        operation_id="bookings_volunteer_offer_answer",
        tags=["bookings"],
        summary="Accept or decline an offer to give up a seat on an oversold flight",
        description=(
            "Accepting takes the passenger off the flight (ticket revoked), rebooks them onto "
            "the next flight of the route or refunds the fare, and records the compensation. "
            "A voucher needs `voucherAgreed`. 404 for an offer that is not on this booking of "
            "the caller's; 400 for one already answered, outside the time between the check-in "
            "cut-off and gate close, or a voucher without agreement; nothing changes."
        ),
        request=VolunteerAnswerInputSerializer,
        responses={200: VolunteerAnswerSerializer, **problems(400, 401, 404, 503)},
    )
    def post(self, request, booking_id: int, offer_id: int):
        data = VolunteerAnswerInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        offer = answer_offer(
            customer=request.user,
            offer_id=offer_id,
            booking_id=booking_id,
            accept=data.validated_data["accept"],
            remedy=Remedy(data.validated_data["remedy"]),
            method=PayoutMethod(data.validated_data["payout_method"]),
            voucher_agreed=data.validated_data["voucher_agreed"],
        )
        return Response(
            VolunteerAnswerSerializer({"offer_id": offer.pk, "status": offer.status}).data
        )
