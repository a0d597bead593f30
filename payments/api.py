"""REST endpoints: pay for a held booking, receive gateway webhooks, quote a refund.

Thin: parse, call a service, render.  Errors leave through the project-wide problem+json
handler (`config.api.exceptions`), which maps each DomainError's status.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.utils.text import format_lazy
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings.selectors import access_booking, acts_for_customers
from kernel.web.id_urls import id_url
from kernel.web.idempotency import idempotency_key_parameter, idempotent_response
from kernel.web.openapi import ProblemSerializer, problems
from kernel.web.problems import PROBLEM_CONTENT_TYPE
from kernel.web.throttles import PaymentsThrottle, rate_text
from payments.errors import GatewayNotFound
from payments.gateways import enabled_gateway_names, gateway_names
from payments.gateways.sandbox import SIGNATURE_HEADER as SANDBOX_SIGNATURE_HEADER
from payments.gateways.stripe import SIGNATURE_HEADER as STRIPE_SIGNATURE_HEADER
from payments.models import PaymentStatus
from payments.pay_input import PayRequestSerializer, pay_request
from payments.paying import pay_for_booking
from payments.selectors import quote_refund
from payments.webhooks import receive_webhook

# --- serializers -------------------------------------------------------------------------------


class PaymentSerializer(serializers.Serializer):
    """Documents the stored body that `payments.selectors.payment_json` builds."""

    payment_id = serializers.IntegerField()
    booking_id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=PaymentStatus.choices)
    booking_status = serializers.CharField()
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    gateway = serializers.CharField()
    gateway_reference = serializers.CharField(allow_blank=True)
    checkout_url = serializers.CharField(
        allow_null=True, help_text="Hosted checkout to send the customer to (202 only)."
    )
    client_secret = serializers.CharField(
        allow_null=True,
        help_text="Stripe: the PaymentIntent client secret for Stripe.js, when the bank asks "
        "for 3-D Secure (202 only).",
    )


class PaymentProblemSerializer(ProblemSerializer):
    payment = PaymentSerializer(required=False, help_text="The payment the problem is about.")
    payment_id = serializers.IntegerField(required=False, allow_null=True)
    checkout_url = serializers.CharField(required=False, allow_null=True)
    amount = serializers.CharField(required=False, help_text="What the booking costs.")
    currency = serializers.CharField(required=False)

    class Meta:
        ref_name = "PaymentProblem"


class RefundQuoteSerializer(serializers.Serializer):
    """A `payments.selectors.RefundQuote`, the same shape as its `as_json()`."""

    booking_id = serializers.IntegerField()
    cancellable = serializers.BooleanField()
    rule = serializers.ChoiceField(
        choices=["hold", "full", "partial", "none", "refused"],
        help_text="hold: nothing paid yet; full/partial/none: the policy band; refused: "
        "cannot be cancelled (departed or already closed).",
    )
    percent = serializers.IntegerField(min_value=0, max_value=100)
    refund_amount = serializers.DecimalField(max_digits=12, decimal_places=2, source="amount")
    paid = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    reason = serializers.CharField(help_text="The policy rule that applies, in words.")


class WebhookAckSerializer(serializers.Serializer):
    received = serializers.BooleanField()
    event_id = serializers.CharField()
    duplicate = serializers.BooleanField(help_text="Seen before: acknowledged and ignored.")


def _payment_problem(description: str) -> OpenApiResponse:
    return OpenApiResponse(PaymentProblemSerializer, description=description)


IDEMPOTENCY_KEY = idempotency_key_parameter(required=True, what="payment")
# Each gateway signs its webhooks with a header of its own, so the schema documents one
# webhook path per gateway, each with its header required (a single `{gateway}` path could
# only mark both optional, which the server is not).
GATEWAY_SIGNATURE_HEADERS = {
    "sandbox": (SANDBOX_SIGNATURE_HEADER, "The sandbox gateway"),
    "stripe": (STRIPE_SIGNATURE_HEADER, "Stripe"),
}


def signature_header(gateway: str) -> OpenApiParameter:
    name, who = GATEWAY_SIGNATURE_HEADERS[gateway]
    return OpenApiParameter(
        name,
        {"type": "string", "minLength": 1, "pattern": r"\S"},
        OpenApiParameter.HEADER,
        required=True,
        description=f"{who}'s signature over the raw body; a missing or wrong one is 400.",
    )


BAD_SIGNATURE = "The signature is missing or wrong, or the signed body is not an event."


# --- views -------------------------------------------------------------------------------------


class PayForBookingApi(APIView):
    throttle_classes = [PaymentsThrottle]

    @extend_schema(
        operation_id="bookings_pay",
        tags=["payments"],
        summary="Pay for a held booking",
        description=(
            "Charges the booking's amount once per Idempotency-Key. 201: paid, the booking is "
            "CONFIRMED. 202: the customer must finish a hosted checkout (`checkoutUrl`) or "
            "confirm with Stripe.js (`clientSecret`). A new attempt (new key) replaces one "
            "still waiting for the customer: the old one is cancelled at the gateway first. "
            "A held booking is paid by its owner, or by someone booking on their behalf."
        ),
        parameters=[IDEMPOTENCY_KEY],
        request=PayRequestSerializer,
        responses={
            201: PaymentSerializer,
            202: PaymentSerializer,
            (402, PROBLEM_CONTENT_TYPE): _payment_problem("The card was declined (`payment`)."),
            (409, PROBLEM_CONTENT_TYPE): _payment_problem(
                "Another payment for this booking is under way (`paymentId`, `checkoutUrl`), "
                "the first request with this key is still running, the booking is not HELD, "
                "or the hold ended before the money arrived (refunded in full, `payment`)."
            ),
            (502, PROBLEM_CONTENT_TYPE): _payment_problem(
                "The payment provider could not be reached; retry with a new key."
            ),
            **problems(
                400,
                401,
                403,
                404,
                410,
                415,
                422,
                429,
                503,
                s400="Invalid body, missing Idempotency-Key, or an amount/currency that does not "
                "match the booking.",
                s404="No such booking of yours.",
                s429=format_lazy(
                    "More than {} pay requests by this account; retry after `Retry-After` "
                    "seconds with the same Idempotency-Key.",
                    rate_text("payments"),
                ),
                s422="A passenger has no name yet (`passenger-names-missing`, with "
                "`unnamedPassengers`; nothing is recorded or charged), or this Idempotency-Key "
                "was already used for a different request.",
            ),
        },
    )
    def post(self, request, booking_id: int):
        data = pay_request(request.data)
        result = pay_for_booking(
            customer=request.user,
            booking_id=booking_id,
            # The header's META key: `request.headers` would build a dict of every header.
            idempotency_key=request.META.get("HTTP_IDEMPOTENCY_KEY"),
            amount=data.get("amount"),
            currency=data.get("currency"),
            payment_method=data.get("payment_method", ""),
            # Asked only for another customer's booking (two queries saved on one's own).
            on_behalf=partial(acts_for_customers, request.user),
        )
        # 201: the booking is CONFIRMED; Location names it (there the tickets are linked).
        headers = (
            {"Location": id_url("bookings_api:detail", booking_id)}
            if result.status == 201
            else None
        )
        return idempotent_response(result, headers=headers)


class RefundQuoteApi(APIView):
    @extend_schema(
        operation_id="bookings_refund_quote",
        tags=["payments"],
        summary="What cancelling now would refund",
        description="The refund policy applied to this booking at this moment; nothing changes.",
        responses={200: RefundQuoteSerializer, **problems(401, 404)},
    )
    def get(self, request, booking_id: int):
        booking = access_booking(user=request.user, booking_id=booking_id)
        quote = quote_refund(customer=booking.customer, booking_id=booking.pk)
        return Response(RefundQuoteSerializer(quote).data)


class PaymentWebhookApi(APIView):
    """The gateway calls this; its signature over the raw body is the authentication."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="payments_webhook",
        tags=["payments"],
        summary="Gateway webhook (the configured gateway)",
        description="The gateway selected by `PAYMENTS_GATEWAY`; its signature header is "
        "required. Each gateway also has a path of its own (`/api/payments/webhook/<name>`).",
        request={"application/json": OpenApiTypes.OBJECT},
        parameters=[signature_header(settings.PAYMENTS["GATEWAY"])],
        responses={200: WebhookAckSerializer, **problems(400, 503, s400=BAD_SIGNATURE)},
        auth=[],
    )
    def post(self, request, gateway: str | None = None):
        # Only the gateways in use have a webhook: the sandbox's, in particular, does not
        # exist beside a real gateway.
        if gateway is not None and gateway not in enabled_gateway_names():
            raise GatewayNotFound(
                gettext("There is no payment gateway %(gateway)r.") % {"gateway": gateway}
            )
        # The raw bytes, not request.data: the signature covers exactly what was sent.
        outcome = receive_webhook(body=request.body, headers=request.headers, gateway_name=gateway)
        return Response(
            {"received": True, "event_id": outcome.event_id, "duplicate": outcome.duplicate}
        )


def document_gateways_in_use(endpoints, **kwargs):
    """drf-spectacular preprocessing hook: the schema this server serves lists the webhooks of
    the gateways in use here (`enabled_gateway_names`), the only ones that answer; the route of
    a gateway not in use is a 404 whatever is sent."""
    in_use = {f"/api/payments/webhook/{name}" for name in enabled_gateway_names()}
    every = {f"/api/payments/webhook/{name}" for name in gateway_names()}
    return [e for e in endpoints if e[0] not in every or e[0] in in_use]


def gateway_webhook_view(gateway: str):
    """`POST /api/payments/webhook/<gateway>`: the webhook of one named gateway, documented
    with that gateway's signature header.  A gateway not in use answers 404."""

    class GatewayWebhookApi(PaymentWebhookApi):
        @extend_schema(
            operation_id=f"payments_webhook_{gateway}",
            tags=["payments"],
            summary=f"Gateway webhook ({gateway})",
            request={"application/json": OpenApiTypes.OBJECT},
            parameters=[signature_header(gateway)],
            responses={
                200: WebhookAckSerializer,
                **problems(
                    400, 404, 503, s400=BAD_SIGNATURE, s404="This gateway is not in use here."
                ),
            },
            auth=[],
        )
        def post(self, request):
            return super().post(request, gateway)

    GatewayWebhookApi.__name__ = GatewayWebhookApi.__qualname__ = f"{gateway.title()}WebhookApi"
    return GatewayWebhookApi.as_view()
