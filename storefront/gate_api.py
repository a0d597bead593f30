"""Offline gates over REST (gate staff only): open a gate device for a sale and get its
bundle, sync a batch of scans made offline.  The rules are `bookings.gate_sync`'s."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings.gate_sync import ScanReport, access_gate, gate_bundle, open_gate, sync_gate_scans
from bookings.models import ScanFlag
from bookings.tickets import ScanOutcome
from kernel.web.openapi import problems
from storefront.booking_serializers import DB_BIGINT_MAX, sale_named_by

OPERATE_GATE = "bookings.operate_gate"
MAX_CLOCK_OFFSET = timedelta(days=1)  # a gate clock further off is broken, not skewed
MAX_SCANS_PER_SYNC = 2000


class OperatesGate(BasePermission):
    """Staff holding `bookings.operate_gate`: gate operators, superusers."""

    message = "Gate devices are for staff with the permission to operate a gate."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(
            user and user.is_authenticated and user.is_staff and user.has_perm(OPERATE_GATE)
        )


class BundleSerializer(serializers.Serializer):
    """What a gate needs offline; no private key, nothing that could sign a ticket."""

    sale_id = serializers.IntegerField()
    wrong_sale = serializers.ChoiceField(
        choices=["wrong_flight", "wrong_event"],
        help_text="The outcome for a ticket certified for another sale.",
    )
    keys = serializers.DictField(
        child=serializers.CharField(),
        help_text="The sale's Ed25519 public keys, key id -> raw key (base64url).",
    )
    step_seconds = serializers.IntegerField(help_text="A rotating code's time step.")
    skew_steps = serializers.IntegerField(
        help_text="Steps either side of the gate's (corrected) step that are accepted."
    )
    clock_offset_ms = serializers.IntegerField(
        help_text="The gate's clock minus the server's, measured now; the gate subtracts it."
    )
    server_time = serializers.DateTimeField()
    revoked_serials = serializers.ListField(child=serializers.CharField())
    used_serials = serializers.ListField(child=serializers.CharField())
    superseded_certs = serializers.ListField(
        child=serializers.CharField(), help_text="Certificates of keys their ticket replaced."
    )
    static_codes = serializers.DictField(
        child=serializers.DictField(),
        help_text="Printed (static) codes by their SHA-256 digest (first 32 hex digits): "
        "serial, seat, fareClass, holder.",
    )


class GateOpenRequestSerializer(serializers.Serializer):
    flight_id = serializers.IntegerField(min_value=1, max_value=DB_BIGINT_MAX, required=False)
    event_id = serializers.IntegerField(
        min_value=1,
        max_value=DB_BIGINT_MAX,
        required=False,
        help_text="The sale the gate checks: exactly one of `flightId` and `eventId`.",
    )
    name = serializers.CharField(max_length=80, help_text='The device, e.g. "North door 2".')
    gate_time = serializers.DateTimeField(help_text="The gate's own clock, now.")

    def validate_name(self, name: str) -> str:
        if not name.isprintable():
            raise ValidationError(gettext("Printable characters only."))
        return name

    def validate(self, data: dict) -> dict:
        if ("flight_id" in data) == ("event_id" in data):
            raise ValidationError(gettext("Give exactly one of flightId and eventId."))
        return data


class GateOpenedSerializer(serializers.Serializer):
    device_id = serializers.IntegerField()
    bundle = BundleSerializer()


class OpenGateApi(APIView):
    permission_classes = [OperatesGate]

    @extend_schema(
        operation_id="gate_open",
        tags=["check-in"],
        summary="Open an offline gate and download its bundle",
        description="Registers a gate device for a flight or event, measures its clock against "
        "the server's, and returns the bundle it verifies with while offline.",
        request=GateOpenRequestSerializer,
        responses={201: GateOpenedSerializer, **problems(400, 401, 403, 404)},
    )
    def post(self, request):
        data = GateOpenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        sale_id = sale_named_by(values)
        _check_clock(values["gate_time"])
        device = open_gate(
            sale_id=sale_id,
            name=values["name"],
            operator=request.user,
            gate_time=values["gate_time"],
        )
        body = {"device_id": device.pk, "bundle": gate_bundle(device=device)}
        return Response(GateOpenedSerializer(body).data, status=201)


def _check_clock(gate_time) -> None:
    if abs(gate_time - timezone.now()) > MAX_CLOCK_OFFSET:
        raise ValidationError({"gate_time": [gettext("The gate's clock is more than a day off.")]})


class ScanReportSerializer(serializers.Serializer):
    local_id = serializers.CharField(max_length=40, help_text="The gate's own id of the scan.")
    serial = serializers.CharField(max_length=24, allow_blank=True)
    cert_id = serializers.CharField(max_length=24, allow_blank=True, default="")
    outcome = serializers.ChoiceField(choices=ScanOutcome.choices, help_text="The gate's verdict.")
    scanned_at = serializers.DateTimeField(help_text="On the gate's own clock.")

    def validate(self, data: dict) -> dict:
        for name in ("local_id", "serial", "cert_id"):
            if not (data[name].isascii() and data[name].isprintable()):
                raise ValidationError({name: [gettext("Printable ASCII only.")]})
        return data


class SyncedScanSerializer(serializers.Serializer):
    local_id = serializers.CharField()
    flag = serializers.ChoiceField(
        choices=ScanFlag.choices, help_text='"" = nothing to flag; DUPLICATE = a second entry.'
    )
    scanned_at = serializers.DateTimeField(help_text="The scan's moment on the server's clock.")


class GateSyncRequestSerializer(serializers.Serializer):
    gate_time = serializers.DateTimeField(help_text="The gate's own clock, now.")
    scans = ScanReportSerializer(many=True, max_length=MAX_SCANS_PER_SYNC)

    def validate(self, data: dict) -> dict:
        latest = data["gate_time"] + timedelta(seconds=5)
        for number, scan in enumerate(data["scans"]):
            if scan["scanned_at"] > latest:
                raise ValidationError(
                    {f"scans[{number}].scanned_at": [gettext("Later than gateTime.")]}
                )
        if len({s["local_id"] for s in data["scans"]}) != len(data["scans"]):
            raise ValidationError({"scans": [gettext("A localId appears twice.")]})
        return data


class GateSyncedSerializer(serializers.Serializer):
    device_id = serializers.IntegerField()
    scans = SyncedScanSerializer(many=True)
    bundle = BundleSerializer(help_text="Fresh: revocations up to now.")


class SyncGateApi(APIView):
    permission_classes = [OperatesGate]

    @extend_schema(
        operation_id="gate_sync",
        tags=["check-in"],
        summary="Sync an offline gate's scans",
        description="Records a batch of scans with the gate's own timestamps (resending a "
        "localId is harmless), puts them on the server's clock (the skew rule in "
        "docs/tickets.md), flags every admission of a ticket but the earliest, and returns a "
        "fresh bundle.",
        request=GateSyncRequestSerializer,
        responses={200: GateSyncedSerializer, **problems(400, 401, 403, 404)},
    )
    def post(self, request, device_id: int):
        access_gate(device_id=device_id)
        data = GateSyncRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        _check_clock(values["gate_time"])
        device, rows = sync_gate_scans(
            device_id=device_id,
            gate_time=values["gate_time"],
            scans=[ScanReport(**s) for s in values["scans"]],
        )
        body = {"device_id": device.pk, "scans": rows, "bundle": gate_bundle(device=device)}
        return Response(GateSyncedSerializer(body).data)
