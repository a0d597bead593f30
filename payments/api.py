"""REST endpoints: pay for a held booking, receive gateway webhooks.  Thin: parse, call a
service, render.  Errors are RFC 9457 problem+json."""

from __future__ import annotations

from django.http import JsonResponse
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.exceptions import APIException
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.views import APIView

from bookings.errors import DomainError, TooBusy
from config.problems import PROBLEM_CONTENT_TYPE, domain_error_response, problem_response
from payments.gateways import gateway_names
from payments.services import pay_for_booking
from payments.webhooks import receive_webhook


class ProblemAPIView(APIView):
    """Renders domain errors and DRF's own errors as problem+json.

    (Kept local so payments works on its own; the project-wide exception handler may replace it.)
    """

    def handle_exception(self, exc):
        if isinstance(exc, DomainError):
            response = domain_error_response(exc)
            if isinstance(exc, TooBusy):
                response["Retry-After"] = "2"
            return response
        if not isinstance(exc, APIException):
            return super().handle_exception(exc)
        drf_response = super().handle_exception(exc)
        extra = {}
        if isinstance(exc, serializers.ValidationError):
            extra["errors"] = drf_response.data
            detail = "The request body is not valid."
        else:
            detail = str(exc.detail)
        response = problem_response(
            status=drf_response.status_code,
            title=exc.default_detail.rstrip(".")
            if isinstance(exc.default_detail, str)
            else "Error",
            detail=detail,
            code=exc.default_code.replace("_", "-"),
            **extra,
        )
        for header in ("WWW-Authenticate", "Retry-After", "Allow"):
            if header in drf_response:
                response[header] = drf_response[header]
        return response


class PayForBookingApi(ProblemAPIView):
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        amount = serializers.DecimalField(
            max_digits=12, decimal_places=2, min_value=0, required=False
        )
        currency = serializers.RegexField(r"^[A-Za-z]{3}$", required=False)
        payment_method = serializers.CharField(
            max_length=100,
            required=False,
            allow_blank=True,
            help_text="Sandbox: a test card number; Stripe: a PaymentMethod id. "
            "Omit it for the hosted checkout.",
        )

    def post(self, request, booking_id: int):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = pay_for_booking(
            customer=request.user,
            booking_id=booking_id,
            idempotency_key=request.headers.get("Idempotency-Key"),
            amount=data.validated_data.get("amount"),
            currency=data.validated_data.get("currency"),
            payment_method=data.validated_data.get("payment_method", ""),
        )
        response = JsonResponse(
            result.body,
            status=result.status,
            content_type=PROBLEM_CONTENT_TYPE if result.status >= 400 else "application/json",
        )
        if result.replayed:
            response["Idempotent-Replayed"] = "true"
        return response


class PaymentWebhookApi(ProblemAPIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def post(self, request, gateway: str | None = None):
        if gateway is not None and gateway not in gateway_names():
            return problem_response(status=404, title="Unknown gateway", code="gateway-not-found")
        outcome = receive_webhook(body=request.body, headers=request.headers, gateway_name=gateway)
        return JsonResponse(
            {"received": True, "eventId": outcome.event_id, "duplicate": outcome.duplicate}
        )
