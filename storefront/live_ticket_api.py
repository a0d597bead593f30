"""The ticket page's rotating code over REST: certify a key for a ticket, and (for browsers
without Ed25519) the code the server signs with a key it made.  The owner only, like every
ticket endpoint (`selectors.access_ticket`: 404 for anyone else)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from django.core.validators import RegexValidator
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings import selectors
from bookings.gate_codes import unb64
from bookings.gate_keys import certify_ticket_key, server_signed_code, skew_steps, step_seconds
from bookings.models import KeyOrigin
from kernel.web.openapi import problems


class CredentialSerializer(serializers.Serializer):
    cert_id = serializers.CharField()
    certificate = serializers.CharField(
        help_text="The sale's signature on the ticket's public key; part of every code."
    )
    origin = serializers.ChoiceField(choices=KeyOrigin.choices)
    step_seconds = serializers.IntegerField()
    skew_steps = serializers.IntegerField()
    server_time_ms = serializers.IntegerField(help_text="Unix time in ms, to correct the clock.")


# 32 bytes in base64url: 42 free characters, a 43rd that carries the last 2 bits (its low 4
# bits zero), and the padding "=" that may be left off.  The schema's pattern is this rule.
RAW_KEY_VALIDATOR = RegexValidator(
    r"^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]=?$",
    message=gettext_lazy("Not a raw Ed25519 public key in base64url."),
)


class TicketCredentialRequestSerializer(serializers.Serializer):
    public_key = serializers.CharField(
        required=False,
        min_length=43,
        max_length=44,
        validators=[RAW_KEY_VALIDATOR],
        help_text="The ticket's Ed25519 public key made on this device (raw, base64url). "
        "Leave out to have the server make the key (browsers without Ed25519).",
    )

    def validate_public_key(self, value: str) -> bytes:
        try:
            raw = unb64(value)
        except ValueError:
            raw = b""
        if len(raw) != 32:
            raise ValidationError(gettext("Not a raw Ed25519 public key in base64url."))
        return raw


class TicketCredentialApi(APIView):
    @extend_schema(
        operation_id="bookings_ticket_credential",
        tags=["tickets"],
        summary="Certify a key for the ticket's rotating code",
        description="The sale's key certifies the ticket's public key. A ticket has one "
        "current key: a new one (another phone) replaces the old, which gates refuse after "
        "their next sync. Sending the current key again answers 200 and changes nothing.",
        request=TicketCredentialRequestSerializer,
        responses={
            200: CredentialSerializer,
            201: CredentialSerializer,
            **problems(400, 401, 404, 409, s409="The ticket is used or revoked."),
        },
    )
    def post(self, request, booking_id: int, ticket_id: int):
        ticket = selectors.access_ticket(
            user=request.user, booking_id=booking_id, ticket_id=ticket_id
        )
        data = TicketCredentialRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        credential, created = certify_ticket_key(
            ticket=ticket, public_key=data.validated_data.get("public_key")
        )
        body = {
            "cert_id": credential.cert_id,
            "certificate": credential.certificate,
            "origin": credential.origin,
            "step_seconds": step_seconds(),
            "skew_steps": skew_steps(),
            "server_time_ms": int(time.time() * 1000),
        }
        return Response(CredentialSerializer(body).data, status=201 if created else 200)


class LiveCodeSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="The rotating code of this time step.")
    step = serializers.IntegerField()
    valid_until = serializers.DateTimeField(help_text="The end of the step (server clock).")


class TicketLiveCodeApi(APIView):
    @extend_schema(
        operation_id="bookings_ticket_live_code",
        tags=["tickets"],
        summary="The rotating code of now, signed by the server",
        description="For a ticket whose current key the server made. A key made on the "
        "customer's device never leaves it: then the device signs, and this answers 409.",
        responses={
            200: LiveCodeSerializer,
            **problems(
                401, 404, 409, s409="The ticket is used or revoked, or its key is on a device."
            ),
        },
    )
    def get(self, request, booking_id: int, ticket_id: int):
        ticket = selectors.access_ticket(
            user=request.user, booking_id=booking_id, ticket_id=ticket_id
        )
        now = timezone.now()
        code, step = server_signed_code(ticket=ticket, now=now.timestamp())
        ends = datetime.fromtimestamp((step + 1) * step_seconds(), tz=UTC)
        response = Response(
            LiveCodeSerializer({"code": code, "step": step, "valid_until": ends}).data
        )
        response["Cache-Control"] = "private, no-store"
        return response
